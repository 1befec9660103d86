package org.dbtlancens.spark;

import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.types.StructType;

/**
 * One fragment (or one row range of it, {@link ReadPlan.Slice}) of one pinned version, with what
 * its scan reads; shipped to an executor. {@code offset} and {@code sliceRows} count the fragment's
 * live rows (null rows: to its end); {@code limit} is the pushed limit.
 */
record FragmentPartition(
    ReadTarget target,
    long version,
    int fragmentId,
    long offset,
    Long sliceRows,
    StructType columns,
    boolean rowAddress,
    String filter,
    Integer limit)
    implements InputPartition {}
