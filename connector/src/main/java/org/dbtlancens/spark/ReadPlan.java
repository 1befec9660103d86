package org.dbtlancens.spark;

import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;
import org.lance.FragmentMetadata;
import org.lance.fragment.DataFile;

/**
 * How one scan's fragments become Spark's input partitions, and the size it tells Spark's optimizer.
 *
 * <p>Slices: a fragment larger than a split (Spark's own rule for files, {@code
 * spark.sql.files.maxPartitionBytes} capped by the table's bytes per core, as Parquet's files are
 * split) is read as row ranges of its live rows (Lance's scan offset and limit, which count rows
 * after the deletion file), so a table written as a few big fragments still reads as one task per
 * core. The last slice has no limit, so a slice plan never drops a row whatever the row count said.
 *
 * <p>Statistics: the fragments' data-file bytes, scaled to the live rows and to the width of the
 * columns read (Spark's default sizes, as its file sources scale Parquet files), and the live row
 * count. Without them Spark assumes a table of {@code spark.sql.defaultSizeInBytes} (no end), so a
 * small Lance table never became a broadcast join's build side and every join shuffled both sides.
 */
final class ReadPlan {
  /** Rows per slice below which a fragment is never split: a task's fixed cost outweighs them. */
  static final long MIN_SLICE_ROWS = 65_536;

  /** One input partition's rows: from {@code offset} live rows in, {@code rows} of them (null: to the end). */
  record Slice(int fragmentId, long offset, Long rows) {}

  private ReadPlan() {}

  /** The fragment's bytes on disk: its data files' sizes, or its rows at Spark's default row size where a file has none. */
  static long bytes(FragmentMetadata fragment, StructType schema) {
    long total = 0;
    for (DataFile file : fragment.getFiles()) {
      Long size = file.getFileSizeBytes();
      if (size == null || size <= 0) {
        return fragment.getPhysicalRows() * Math.max(schema.defaultSize(), 8);
      }
      total += size;
    }
    return total;
  }

  static long liveRows(FragmentMetadata fragment) {
    return Math.max(fragment.getPhysicalRows() - fragment.getNumDeletions(), 0);
  }

  /** Spark's split size for files (FilePartition.maxSplitBytes' rule) over these fragments. */
  static long maxSliceBytes(List<FragmentMetadata> fragments, StructType schema) {
    SQLConf conf = SQLConf.get();
    long openCost = conf.filesOpenCostInBytes();
    long total = 0;
    for (FragmentMetadata fragment : fragments) {
      total += bytes(fragment, schema) + openCost;
    }
    long perCore = total / Math.max(parallelism(conf), 1);
    return Math.min(conf.filesMaxPartitionBytes(), Math.max(openCost, perCore));
  }

  private static int parallelism(SQLConf conf) {
    String leaf = conf.getConfString("spark.sql.leafNodeDefaultParallelism", null);
    if (leaf != null) {
      return Integer.parseInt(leaf.trim());
    }
    // SparkContext is in spark-core, which the connector does not compile against; its
    // defaultParallelism is the cores the scheduler has (local[2]: 2), the number Spark's file
    // sources divide a table's bytes by.
    try {
      Object context = SparkSession.class.getMethod("sparkContext").invoke(SparkSession.active());
      return (Integer) context.getClass().getMethod("defaultParallelism").invoke(context);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return 1;
    }
  }

  /** Each fragment as one slice, or as row ranges of about {@code maxSliceBytes} each. */
  static List<Slice> slices(List<FragmentMetadata> fragments, StructType schema, long maxSliceBytes) {
    List<Slice> slices = new ArrayList<>();
    for (FragmentMetadata fragment : fragments) {
      long rows = liveRows(fragment);
      long bytes = bytes(fragment, schema);
      long count = Math.min(ceilDiv(bytes, Math.max(maxSliceBytes, 1)), ceilDiv(rows, MIN_SLICE_ROWS));
      if (count <= 1) {
        slices.add(new Slice(fragment.getId(), 0, null));
        continue;
      }
      long per = ceilDiv(rows, count);
      for (long i = 0; i < count; i++) {
        slices.add(new Slice(fragment.getId(), i * per, i == count - 1 ? null : per));
      }
    }
    return slices;
  }

  private static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }

  /**
   * What a scan of {@code read} (the columns it returns, the row address included) over these
   * fragments tells the optimizer. The row count is given only when Lance returns every live row
   * (no pushed filter); a pushed limit caps it.
   */
  static Statistics statistics(
      List<FragmentMetadata> fragments, StructType schema, StructType read, boolean filtered, Integer limit) {
    double bytes = 0;
    long rows = 0;
    for (FragmentMetadata fragment : fragments) {
      long physical = fragment.getPhysicalRows();
      long live = liveRows(fragment);
      rows += live;
      if (physical > 0) {
        bytes += (double) bytes(fragment, schema) * live / physical;
      }
    }
    double width = Math.max(read.defaultSize(), 8) / (double) Math.max(schema.defaultSize(), 8);
    double factor = SQLConf.get().fileCompressionFactor();
    long size = (long) Math.max(1, Math.min(bytes * Math.min(width, 1.0) * factor, Long.MAX_VALUE));
    OptionalLong numRows = OptionalLong.empty();
    if (!filtered) {
      numRows = OptionalLong.of(limit == null ? rows : Math.min(rows, limit));
    }
    if (limit != null && rows > 0) {
      size = Math.max(1, (long) ((double) size * Math.min(rows, limit) / rows));
    }
    final long sizeInBytes = size;
    final OptionalLong rowCount = numRows;
    return new Statistics() {
      @Override
      public OptionalLong sizeInBytes() {
        return OptionalLong.of(sizeInBytes);
      }

      @Override
      public OptionalLong numRows() {
        return rowCount;
      }
    };
  }
}
