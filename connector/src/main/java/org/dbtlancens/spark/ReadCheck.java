package org.dbtlancens.spark;

import java.util.OptionalLong;
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
 *
 * <p>What it costs: the dataset it opens is held ({@link Datasets#lease}) for the schema inference
 * and scan planning that follow, so a read opens each version once; a version this process
 * committed on one found readable is not opened at all ({@link #unreadableCommitted}).
 */
public final class ReadCheck {
  static final String NEWEST_FILE_VERSION = "2.2";

  private ReadCheck() {}

  /** Null when readable, else why not; {@code version} below 0 means the latest. */
  public static String unreadable(String uri, long version, String storageOptionsJson) {
    try {
      ReadTarget target = ReadTarget.of(uri, storageOptionsJson);
      OptionalLong pinned = version < 0 ? OptionalLong.empty() : OptionalLong.of(version);
      // the dataset opened here is held for the schema inference and the scan planning that follow
      return Datasets.with(target, pinned, ReadCheck::unreadable);
    } catch (RuntimeException | LinkageError e) {
      return reason(e);
    }
  }

  /**
   * Null when readable, else why not, for {@code version}, which this process has just committed
   * on {@code base} with the same schema and data-file version (the adapter says so only then,
   * {@code jvm_connector.own_commit}): its data files are the table's own file version, written by
   * this process, and its reader flags those of {@code base} and of the commit's own kind. So when
   * lance-core holds {@code base} and reads it, {@code version} is readable too, and nothing is
   * opened. Otherwise (the base never opened here, or refused) the latest is checked as {@link
   * #unreadable(String, long, String)} does. A later registration of the table, after a write of
   * another process perhaps, checks its latest again.
   */
  public static String unreadableCommitted(String uri, long base, long version, String storageOptionsJson) {
    try {
      ReadTarget target = ReadTarget.of(uri, storageOptionsJson);
      Datasets.Lease held = Datasets.held(target, base);
      if (held != null) {
        try (held) {
          if (version == base + 1 && unreadable(held.dataset()) == null) {
            return null;
          }
        }
      }
      return Datasets.with(target, OptionalLong.empty(), ReadCheck::unreadable);
    } catch (RuntimeException | LinkageError e) {
      return reason(e);
    }
  }

  /** Null when this JVM's lance-core reads {@code dataset} (opened, so its reader flags are known), else why not. */
  static String unreadable(Dataset dataset) {
    try {
      SchemaMapping.toSpark(Datasets.schema(dataset));
      String fileVersion = dataset.getLanceFileFormatVersion();
      if (newer(fileVersion, NEWEST_FILE_VERSION)) {
        return "data-file version " + fileVersion + " is newer than " + NEWEST_FILE_VERSION
            + ", the newest this connector's lance-core reads";
      }
      return null;
    } catch (RuntimeException | LinkageError e) {
      return reason(e);
    }
  }

  private static String reason(Throwable e) {
    String message = e.getMessage();
    return e.getClass().getSimpleName() + ": " + (message == null ? "" : message.strip());
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
