package org.dbtlancens.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.types.pojo.Schema;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.ReadOptions;
import org.lance.Session;

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
      return dataset.getSchema();
    }
  }

  /** The version a scan reads (the pinned one, else the latest now) and its fragments' ids. */
  static Planned plan(ReadTarget target) {
    try (BufferAllocator allocator = allocator("plan");
        Dataset dataset = open(target, target.version(), allocator)) {
      List<Integer> fragments = new ArrayList<>();
      for (Fragment fragment : dataset.getFragments()) {
        fragments.add(fragment.getId());
      }
      return new Planned(dataset.version(), fragments, dataset.getSchema());
    }
  }

  record Planned(long version, List<Integer> fragmentIds, Schema schema) {}
}
