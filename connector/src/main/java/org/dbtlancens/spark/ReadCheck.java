package org.dbtlancens.spark;

import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * Whether this JVM's lance-core can read a table, asked by the adapter before it registers the
 * table with the JVM connector (docs/jvm-connector.md, "Version skew").
 *
 * <p>The answer is lance-core's own: the table is opened at the version the adapter will read and
 * its schema mapped, which is exactly what a scan does first. A newer pylance may write what this
 * lance-core refuses (a reader feature flag such as 256, mixed data-file versions; data-file
 * version 2.3); a list of known flags kept here would go stale with every Lance release.
 */
public final class ReadCheck {
  private ReadCheck() {}

  /** Null when readable, else why not; {@code version} below 0 means the latest. */
  public static String unreadable(String uri, long version, String storageOptionsJson) {
    Map<String, String> options = new HashMap<>();
    options.put("path", uri);
    if (storageOptionsJson != null) {
      options.put("storage_options", storageOptionsJson);
    }
    try {
      ReadTarget target = ReadTarget.parse(new CaseInsensitiveStringMap(options));
      SchemaMapping.toSpark(Datasets.schema(target, version < 0 ? OptionalLong.empty() : OptionalLong.of(version)));
      return null;
    } catch (RuntimeException | LinkageError e) {
      String message = e.getMessage();
      return e.getClass().getSimpleName() + ": " + (message == null ? "" : message.strip());
    }
  }
}
