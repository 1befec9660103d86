package org.dbtlancens.spark;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.Serializable;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Where a read goes: the dataset's URI, its object-store options, and an optional pinned version
 * or moment (time travel by time: the latest version committed at or before it, resolved once when
 * the scan is planned, {@link Datasets#plan}). Parsed from the source's options with an error naming
 * the bad one; serialisable, since every input partition carries it to an executor.
 */
record ReadTarget(String uri, Map<String, String> storageOptions, Long pinnedVersion, Instant asOf)
    implements Serializable {
  private static final ObjectMapper JSON = new ObjectMapper();

  static ReadTarget parse(CaseInsensitiveStringMap options) {
    String uri = options.get("path");
    if (uri == null || uri.isEmpty()) {
      throw new IllegalArgumentException("the lance_jvm source needs a path: .load(uri) or option path");
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
    ReadTarget target = new ReadTarget(uri, Map.copyOf(storage), null, null);
    return target.travel(options);
  }

  /** The latest version of the dataset at {@code uri}, with object-store options as JSON (null: none). */
  static ReadTarget of(String uri, String storageOptionsJson) {
    Map<String, String> options = new HashMap<>();
    options.put("path", uri);
    if (storageOptionsJson != null) {
      options.put("storage_options", storageOptionsJson);
    }
    return parse(new CaseInsensitiveStringMap(options));
  }

  /**
   * This target with the time travel {@code options} name ({@code version} or {@code timestamp},
   * exclusive), or this one unchanged when they name none. A catalog table's {@code WITH (...)}
   * options reach the scan this way and replace the table's own pin, as on the Python source.
   */
  ReadTarget travel(CaseInsensitiveStringMap options) {
    Long version = version(options.get("version"));
    Instant moment = moment(options.get("timestamp"));
    if (version != null && moment != null) {
      throw new IllegalArgumentException("options version and timestamp are exclusive: give one");
    }
    if (version == null && moment == null) {
      return this;
    }
    return new ReadTarget(uri, storageOptions, version, moment);
  }

  OptionalLong version() {
    return pinnedVersion == null ? OptionalLong.empty() : OptionalLong.of(pinnedVersion);
  }

  private static Long version(String raw) {
    if (raw == null || raw.isEmpty()) {
      return null;
    }
    try {
      return Long.parseLong(raw.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("option version is not a whole number: " + raw, e);
    }
  }

  /** ISO-8601, as the Python source reads it; without a zone, UTC (Lance stamps versions in UTC). */
  static Instant moment(String raw) {
    if (raw == null || raw.isEmpty()) {
      return null;
    }
    String text = raw.trim().replace(' ', 'T');
    try {
      return OffsetDateTime.parse(text).toInstant();
    } catch (DateTimeParseException notOffset) {
      try {
        return LocalDateTime.parse(text).toInstant(ZoneOffset.UTC);
      } catch (DateTimeParseException notLocal) {
        try {
          return LocalDate.parse(text).atStartOfDay().toInstant(ZoneOffset.UTC);
        } catch (DateTimeParseException notDate) {
          throw new IllegalArgumentException(
              "option timestamp is not an ISO-8601 date or time (e.g. 2024-05-01T12:00:00+00:00): " + raw,
              notDate);
        }
      }
    }
  }
}
