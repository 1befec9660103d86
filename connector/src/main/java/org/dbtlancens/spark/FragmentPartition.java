package org.dbtlancens.spark;

import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.types.StructType;

/** One fragment of one pinned version, with what its scan reads; shipped to an executor. */
record FragmentPartition(
    ReadTarget target,
    long version,
    int fragmentId,
    StructType columns,
    boolean rowAddress,
    String filter,
    Integer limit)
    implements InputPartition {}
