package org.dbtlancens.spark;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.arrow.c.ArrowSchema;
import org.apache.arrow.c.CDataDictionaryProvider;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.ReadOptions;
import org.lance.Session;
import org.lance.Version;

/**
 * Every opening of a Lance dataset in this JVM, through one Lance session (its metadata and index
 * caches are shared by the driver's planning and every task's reader in the same JVM) and one root
 * allocator whose children each reader closes.
 */
final class Datasets {
  private static final BufferAllocator ROOT = new RootAllocator();
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
    return Dataset.open().allocator(allocator).uri(target.uri()).readOptions(options.build()).build();
  }

  static Schema schema(ReadTarget target, OptionalLong version) {
    try (BufferAllocator allocator = allocator("schema");
        Dataset dataset = open(target, version, allocator)) {
      return schema(dataset);
    }
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
    try (BufferAllocator allocator = allocator("plan");
        Dataset dataset = open(target, version, allocator)) {
      List<Integer> fragments = new ArrayList<>();
      for (Fragment fragment : dataset.getFragments()) {
        fragments.add(fragment.getId());
      }
      return new Planned(dataset.version(), fragments, schema(dataset));
    }
  }

  /**
   * The latest version committed at or before {@code target.asOf()}: the rule of the Python source
   * ({@code spark/dataset.py version_at}), so time travel by time reads the same version on both paths.
   */
  static long versionAt(ReadTarget target) {
    Instant moment = target.asOf();
    try (BufferAllocator allocator = allocator("versions");
        Dataset dataset = open(target, OptionalLong.empty(), allocator)) {
      long found = -1;
      for (Version version : dataset.listVersions()) {
        if (!version.getDataTime().toInstant().isAfter(moment)) {
          found = Math.max(found, version.getId());
        }
      }
      if (found < 0) {
        throw new IllegalArgumentException(moment + " is before the first version of " + target.uri());
      }
      return found;
    }
  }

  record Planned(long version, List<Integer> fragmentIds, Schema schema) {}
}
