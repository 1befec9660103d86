package org.dbtlancens.spark;

import java.util.List;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.Statistics;
import org.apache.spark.sql.connector.read.SupportsReportStatistics;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * One planned read of one dataset version: an input partition per fragment or fragment slice
 * ({@link ReadPlan}), each scanning the pushed columns, filter and limit. {@link #description()} is
 * what EXPLAIN prints, so the pushed work and the partitions can be seen there. Its statistics
 * (bytes and rows from the fragments' metadata) let Spark broadcast a small Lance table in a join.
 */
final class LanceScan implements Scan, Batch, SupportsReportStatistics {
  private final ReadTarget target;
  private final Datasets.Planned planned;
  private final List<ReadPlan.Slice> slices;
  private final StructType tableSchema;
  private final StructType columns;
  private final boolean rowAddress;
  private final String filter;
  private final Integer limit;

  LanceScan(
      ReadTarget target,
      Datasets.Planned planned,
      List<ReadPlan.Slice> slices,
      StructType tableSchema,
      StructType columns,
      boolean rowAddress,
      String filter,
      Integer limit) {
    if (filter != null && slices.size() != planned.fragments().size()) {
      // A slice's offset counts rows after Lance's filter, so slices of a filtered scan would not
      // partition the fragment's rows; the builder keeps filters with Spark when it slices.
      throw new IllegalStateException("a sliced Lance scan cannot take a pushed filter: " + filter);
    }
    this.target = target;
    this.planned = planned;
    this.slices = slices;
    this.tableSchema = tableSchema;
    this.columns = columns;
    this.rowAddress = rowAddress;
    this.filter = filter;
    this.limit = limit;
  }

  @Override
  public StructType readSchema() {
    return rowAddress ? columns.add(LanceTable.ROW_ADDRESS, DataTypes.LongType, false) : columns;
  }

  @Override
  public String description() {
    return "LanceScan[version=" + planned.version()
        + ", fragments=" + planned.fragments().size()
        + ", partitions=" + slices.size()
        + ", columns=" + String.join(",", columns.fieldNames())
        + (rowAddress ? ", rowAddress" : "")
        + ", filter=" + (filter == null ? "none" : filter)
        + ", limit=" + (limit == null ? "none" : limit) + "]";
  }

  @Override
  public Statistics estimateStatistics() {
    return ReadPlan.statistics(planned.fragments(), tableSchema, readSchema(), filter != null, limit);
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    InputPartition[] partitions = new InputPartition[slices.size()];
    for (int i = 0; i < partitions.length; i++) {
      ReadPlan.Slice slice = slices.get(i);
      partitions[i] = new FragmentPartition(
          target, planned.version(), slice.fragmentId(), slice.offset(), slice.rows(), columns, rowAddress, filter, limit);
    }
    return partitions;
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new FragmentReaderFactory();
  }
}
