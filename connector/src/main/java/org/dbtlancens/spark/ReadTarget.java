package org.dbtlancens.spark;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Where a read goes: the dataset's URI, its object-store options and an optional pinned version.
 * Parsed from the source's options with an error naming the bad one; serialisable, since every
 * input partition carries it to an executor.
 */
record ReadTarget(String uri, Map<String, String> storageOptions, Long pinnedVersion) implements Serializable {
  private static final ObjectMapper JSON = new ObjectMapper();

  static ReadTarget parse(CaseInsensitiveStringMap options) {
    String uri = options.get("path");
    if (uri == null || uri.isEmpty()) {
      throw new IllegalArgumentException("the lance_jvm source needs a path: .load(uri) or option path");
    }
    if (options.containsKey("timestamp")) {
      throw new IllegalArgumentException(
          "the lance_jvm source reads by option version only; option timestamp is the Python source's");
    }
    Map<String, String> storage = new HashMap<>();
    String raw = options.get("storage_options");
    if (raw != null && !raw.isEmpty()) {
      try {
        storage.putAll(JSON.readValue(raw, new TypeReference<Map<String, String>>() {}));
      } catch (IOException e) {
        throw new IllegalArgumentException("option storage_options is not a JSON object of strings: " + raw, e);
      }
    }
    Long version = null;
    String rawVersion = options.get("version");
    if (rawVersion != null && !rawVersion.isEmpty()) {
      try {
        version = Long.parseLong(rawVersion.trim());
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("option version is not a whole number: " + rawVersion, e);
      }
    }
    return new ReadTarget(uri, Map.copyOf(storage), version);
  }

  OptionalLong version() {
    return pinnedVersion == null ? OptionalLong.empty() : OptionalLong.of(pinnedVersion);
  }
}
