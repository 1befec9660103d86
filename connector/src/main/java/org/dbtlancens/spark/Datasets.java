package org.dbtlancens.spark;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.CDataDictionaryProvider;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.ReadOptions;
import org.lance.Session;
import org.lance.Version;

/**
 * Every opening of a Lance dataset in this JVM, through one Lance session (its metadata and index
 * caches are shared by the driver's planning and every task's reader in the same JVM) and one root
 * allocator whose children their users close.
 *
 * <p>Reads (the adapter's read check, a source's schema inference, a scan's planning, each read
 * task) go through {@link #lease}, which holds what it opened for the next of them: on an object
 * store each open is a LIST of {@code _versions/} (or a HEAD) and a GET of the manifest, and the
 * check, the schema, the planning and every task of one read used to open the same table apart
 * (docs/jvm-connector.md, "What the check costs").
 */
final class Datasets {
  private static final BufferAllocator ROOT = new RootAllocator();
  private static final AtomicLong OPENS = new AtomicLong();
  private static Session session;

  private Datasets() {}

  private static synchronized Session session() {
    if (session == null) {
      session = Session.builder().build();
    }
    return session;
  }

  static BufferAllocator allocator(String name) {
    return ROOT.newChildAllocator(name, 0, Long.MAX_VALUE);
  }

  static Dataset open(ReadTarget target, OptionalLong version, BufferAllocator allocator) {
    ReadOptions.Builder options = new ReadOptions.Builder().setSession(session());
    options.setStorageOptions(target.storageOptions());
    version.ifPresent(options::setVersion);
    OPENS.incrementAndGet();
    return Dataset.open().allocator(allocator).uri(target.uri()).readOptions(options.build()).build();
  }

  /** How many datasets this JVM's lance-core has opened (the driver's and its tasks'): what a test or a profile counts. */
  public static long opens() {
    return OPENS.get();
  }

  /** The schema of {@code version} (empty: the latest) of the target's dataset, through {@link #with}. */
  static Schema schema(ReadTarget target, OptionalLong version) {
    return with(target, version, Datasets::schema);
  }

  /**
   * The dataset's Arrow schema with each dictionary-encoded column marked as such. lance-core's
   * {@code getSchema} imports its FFI schema with no dictionary provider, which drops the encoding:
   * a {@code dictionary<int32, string>} column came back as a plain int32 and was read as its
   * indices (numbers where the Python source, spark/types.py, reads strings). Here the same FFI
   * schema is imported with a provider, so the encoding stays. lance-core has no public call for
   * it, so its own exporter is reached by reflection; if that ever fails, the table is unreadable
   * here (ReadCheck names why) and takes the Python source rather than risk wrong types.
   */
  static Schema schema(Dataset dataset) {
    try (BufferAllocator allocator = allocator("schema-import");
        ArrowSchema ffi = ArrowSchema.allocateNew(allocator);
        CDataDictionaryProvider dictionaries = new CDataDictionaryProvider()) {
      Method export = Dataset.class.getDeclaredMethod("importFfiSchema", long.class);
      export.setAccessible(true);
      export.invoke(dataset, ffi.memoryAddress());
      return Data.importSchema(allocator, ffi, dictionaries);
    } catch (ReflectiveOperationException | RuntimeException e) {
      Throwable cause = e instanceof InvocationTargetException target ? target.getCause() : e;
      throw new UnsupportedOperationException(
          "lance-core's schema of this table could not be read with its dictionary encodings: " + cause, cause);
    }
  }

  /**
   * The version a scan reads (the pinned one; the latest committed at or before the target's
   * moment; else the latest now) and its fragments' ids.
   */
  static Planned plan(ReadTarget target) {
    OptionalLong version = target.asOf() == null ? target.version() : OptionalLong.of(versionAt(target));
    return with(target, version, dataset -> {
      List<FragmentMetadata> fragments = new ArrayList<>();
      for (Fragment fragment : dataset.getFragments()) {
        fragments.add(fragment.metadata());
      }
      return new Planned(dataset.version(), fragments, schema(dataset));
    });
  }

  /**
   * The latest version committed at or before {@code target.asOf()}: the rule of the Python source
   * ({@code spark/dataset.py version_at}), so time travel by time reads the same version on both paths.
   */
  static long versionAt(ReadTarget target) {
    Instant moment = target.asOf();
    long found = with(target, OptionalLong.empty(), dataset -> {
      long newest = -1;
      for (Version version : dataset.listVersions()) {
        if (!version.getDataTime().toInstant().isAfter(moment)) {
          newest = Math.max(newest, version.getId());
        }
      }
      return newest;
    });
    if (found < 0) {
      throw new IllegalArgumentException(moment + " is before the first version of " + target.uri());
    }
    return found;
  }

  // ------------------------------------------------------------------ datasets held for the next open

  /** How many opened datasets this JVM holds at most; the least recently used past it is closed. */
  static final int MOST_HELD = 32;

  private record Key(String uri, Map<String, String> storageOptions, long version) {}

  /** An opened dataset and its allocator; closed once dropped from the holder and no caller uses it. */
  private static final class Held {
    final Dataset dataset;
    final BufferAllocator allocator;
    int users;
    boolean dropped;

    Held(Dataset dataset, BufferAllocator allocator) {
      this.dataset = dataset;
      this.allocator = allocator;
    }

    /** No longer lent to new callers; closed now if nobody uses it, else by its last user's release. */
    void drop() {
      dropped = true;
      closeIfUnused();
    }

    void closeIfUnused() {
      if (dropped && users == 0) {
        dataset.close();
        allocator.close();
      }
    }
  }

  private static final LinkedHashMap<Key, Held> HELD = new LinkedHashMap<>(16, 0.75f, true);

  /**
   * {@code use} applied to {@code version} of the target's dataset (empty: the latest), through a
   * {@link #lease}.
   */
  static <T> T with(ReadTarget target, OptionalLong version, Function<Dataset, T> use) {
    try (Lease lease = lease(target, version)) {
      return use.apply(lease.dataset());
    }
  }

  /**
   * {@code version} of the target's dataset (empty: the latest), lent until the lease is closed;
   * opened by lance-core only when the holder has no dataset of that version yet. A version's
   * manifest never changes (Lance writes each version file once), so a held one serves every later
   * read of it. The latest is asked anew every time (a write since may have made a new version,
   * and set a reader flag): one listing of {@code _versions/} on a held dataset instead of an open;
   * when that version is not held, the latest is opened (a LIST and a GET, where an open by its
   * number would be a HEAD and a GET). A latest version lower than one held means the table was
   * dropped and made again at this location: what is held above it is dropped.
   */
  static Lease lease(ReadTarget target, OptionalLong version) {
    Held held = null;
    if (version.isPresent()) {
      held = borrow(new Key(target.uri(), target.storageOptions(), version.getAsLong()));
    } else {
      Held newest = borrowNewest(target);
      if (newest != null) {
        long latest;
        try {
          latest = newest.dataset.latestVersion();
        } finally {
          release(newest);
        }
        forgetAbove(target, latest);
        held = borrow(new Key(target.uri(), target.storageOptions(), latest));
      }
    }
    return new Lease(held != null ? held : openAndHold(target, version));
  }

  /** A dataset of the holder lent to one caller, who must not close the dataset itself. */
  static final class Lease implements AutoCloseable {
    private final Held held;
    private boolean closed;

    private Lease(Held held) {
      this.held = held;
    }

    Dataset dataset() {
      return held.dataset;
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        release(held);
      }
    }
  }

  /** {@code version} of the target's dataset if the holder has it (lent), else null: nothing is opened. */
  static Lease held(ReadTarget target, long version) {
    Held held = borrow(new Key(target.uri(), target.storageOptions(), version));
    return held == null ? null : new Lease(held);
  }

  private static Held openAndHold(ReadTarget target, OptionalLong version) {
    BufferAllocator allocator = allocator("held");
    Dataset dataset;
    try {
      dataset = open(target, version, allocator);
    } catch (RuntimeException | Error e) {
      allocator.close();
      throw e;
    }
    Held opened = new Held(dataset, allocator);
    Key key = new Key(target.uri(), target.storageOptions(), dataset.version());
    synchronized (HELD) {
      opened.users = 1;
      Held before = HELD.put(key, opened);
      if (before != null && before != opened) {
        before.drop();
      }
      Iterator<Held> eldest = HELD.values().iterator();
      while (HELD.size() > MOST_HELD && eldest.hasNext()) {
        Held evicted = eldest.next();
        eldest.remove();
        evicted.drop();
      }
    }
    return opened;
  }

  private static Held borrow(Key key) {
    synchronized (HELD) {
      Held held = HELD.get(key);
      if (held != null) {
        held.users++;
      }
      return held;
    }
  }

  /** The held dataset of the target's location with the highest version, borrowed; null if none. */
  private static Held borrowNewest(ReadTarget target) {
    synchronized (HELD) {
      Map.Entry<Key, Held> newest = null;
      for (Map.Entry<Key, Held> entry : HELD.entrySet()) {
        Key key = entry.getKey();
        if (key.uri().equals(target.uri())
            && key.storageOptions().equals(target.storageOptions())
            && (newest == null || key.version() > newest.getKey().version())) {
          newest = entry;
        }
      }
      if (newest == null) {
        return null;
      }
      newest.getValue().users++;
      return newest.getValue();
    }
  }

  /** Drops the held versions of the target's location above {@code latest} (a table made again there). */
  private static void forgetAbove(ReadTarget target, long latest) {
    synchronized (HELD) {
      Iterator<Map.Entry<Key, Held>> entries = HELD.entrySet().iterator();
      while (entries.hasNext()) {
        Map.Entry<Key, Held> entry = entries.next();
        Key key = entry.getKey();
        if (key.uri().equals(target.uri()) && key.version() > latest) {
          entries.remove();
          entry.getValue().drop();
        }
      }
    }
  }

  private static void release(Held held) {
    synchronized (HELD) {
      held.users--;
      held.closeIfUnused();
    }
  }

  /** A scan's version, its fragments (ids, rows, deletions, file sizes: the read plan's inputs) and schema. */
  record Planned(long version, List<FragmentMetadata> fragments, Schema schema) {}
}
