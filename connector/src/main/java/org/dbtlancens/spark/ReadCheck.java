package org.dbtlancens.spark;

import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.lance.Dataset;

/**
 * Whether this JVM's lance-core can read a table, asked by the adapter before it registers the
 * table with the JVM connector (docs/jvm-connector.md, "Version skew").
 *
 * <p>Mostly lance-core's own answer: the table is opened at the version the adapter will read and
 * its schema mapped, as a scan does first, so a reader feature flag it does not know (256, mixed
 * data-file versions) refuses it here. One thing lance-core 7 does not refuse: it opens a table of
 * data-file version 2.3 (pylance 14's unstable "next"), then its decoder panics and aborts the JVM
 * on the first batch. So data-file versions newer than {@link #NEWEST_FILE_VERSION}, the newest
 * this connector's lance-core was tested to read (every column type), are refused too.
 */
public final class ReadCheck {
  static final String NEWEST_FILE_VERSION = "2.2";

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
      OptionalLong pinned = version < 0 ? OptionalLong.empty() : OptionalLong.of(version);
      try (BufferAllocator allocator = Datasets.allocator("read-check");
          Dataset dataset = Datasets.open(target, pinned, allocator)) {
        SchemaMapping.toSpark(Datasets.schema(dataset));
        String fileVersion = dataset.getLanceFileFormatVersion();
        if (newer(fileVersion, NEWEST_FILE_VERSION)) {
          return "data-file version " + fileVersion + " is newer than " + NEWEST_FILE_VERSION
              + ", the newest this connector's lance-core reads";
        }
      }
      return null;
    } catch (RuntimeException | LinkageError e) {
      String message = e.getMessage();
      return e.getClass().getSimpleName() + ": " + (message == null ? "" : message.strip());
    }
  }

  /** Whether version {@code found} ("major.minor"; anything unparsable counts as newer) is past {@code newest}. */
  static boolean newer(String found, String newest) {
    String[] a = found.split("\\.");
    String[] b = newest.split("\\.");
    try {
      int major = Integer.parseInt(a[0].trim());
      int minor = a.length > 1 ? Integer.parseInt(a[1].trim()) : 0;
      int newestMajor = Integer.parseInt(b[0]);
      int newestMinor = Integer.parseInt(b[1]);
      return major > newestMajor || (major == newestMajor && minor > newestMinor);
    } catch (NumberFormatException e) {
      return true;
    }
  }
}
