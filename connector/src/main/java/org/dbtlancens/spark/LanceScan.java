package org.dbtlancens.spark;

import java.util.List;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * One planned read of one dataset version: an input partition per fragment, each scanning the
 * pushed columns, filter and limit. {@link #description()} is what EXPLAIN prints, so the pushed
 * work can be seen there.
 */
final class LanceScan implements Scan, Batch {
  private final ReadTarget target;
  private final long version;
  private final List<Integer> fragmentIds;
  private final StructType columns;
  private final boolean rowAddress;
  private final String filter;
  private final Integer limit;

  LanceScan(
      ReadTarget target,
      long version,
      List<Integer> fragmentIds,
      StructType columns,
      boolean rowAddress,
      String filter,
      Integer limit) {
    this.target = target;
    this.version = version;
    this.fragmentIds = fragmentIds;
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
    return "LanceScan[version=" + version
        + ", fragments=" + fragmentIds.size()
        + ", columns=" + String.join(",", columns.fieldNames())
        + (rowAddress ? ", rowAddress" : "")
        + ", filter=" + (filter == null ? "none" : filter)
        + ", limit=" + (limit == null ? "none" : limit) + "]";
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    InputPartition[] partitions = new InputPartition[fragmentIds.size()];
    for (int i = 0; i < partitions.length; i++) {
      partitions[i] = new FragmentPartition(target, version, fragmentIds.get(i), columns, rowAddress, filter, limit);
    }
    return partitions;
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new FragmentReaderFactory();
  }
}
