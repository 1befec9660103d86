package org.dbtlancens.spark;

import java.util.Iterator;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;

/**
 * One task's rows as a stream of Arrow batches in the table's schema, for lance-core's fragment
 * writer, which pulls it through the Arrow C stream interface.
 *
 * <p>A failure upstream (the model's query failing in this task) or while copying a row (a NULL in
 * a NOT NULL column) ends the stream cleanly instead of failing Lance's write: Lance then finishes
 * and reports the files it started, so the task can hand them over for deletion before it rethrows
 * the failure ({@link #failure}). A kill (Spark stopping the task because another task failed the
 * job) fails the stream instead: the driver no longer hears from a task of a failed job, so Lance
 * is made to abandon the file it is writing rather than finish it.
 */
final class WriteBatches extends ArrowReader {
  private final Schema schema;
  private final StructType spark;
  private final Iterator<InternalRow> rows;
  private final int batchRows;
  private ArrowRowWriter writer;
  private RuntimeException failure;

  WriteBatches(
      BufferAllocator allocator, Schema schema, StructType spark, Iterator<InternalRow> rows, int batchRows) {
    super(allocator);
    this.schema = schema;
    this.spark = spark;
    this.rows = rows;
    this.batchRows = batchRows;
  }

  /** What ended the stream early, or null when every row was written. */
  RuntimeException failure() {
    return failure;
  }

  @Override
  public boolean loadNextBatch() throws java.io.IOException {
    if (failure != null) {
      return false;
    }
    VectorSchemaRoot root = getVectorSchemaRoot();
    if (writer == null) {
      root.allocateNew();
      writer = ArrowRowWriter.forRoot(root, spark);
    } else {
      for (FieldVector vector : root.getFieldVectors()) {
        vector.reset();
      }
    }
    int count = 0;
    try {
      while (count < batchRows && rows.hasNext()) {
        writer.write(rows.next(), count);
        count++;
      }
    } catch (RuntimeException e) {
      if (killed(e)) {
        // Spark stopped this task because another one failed the job: Spark no longer hears of
        // this task's files then, so Lance must not finish the one it is writing (it drops it).
        throw new java.io.IOException("the Spark task was killed; its Lance file is abandoned", e);
      }
      failure = e;
    }
    root.setRowCount(count);
    return count > 0;
  }

  /** Whether {@code e} is Spark stopping this task (a kill), not a failure of its own rows. */
  static boolean killed(Throwable e) {
    for (Throwable cause = e; cause != null; cause = cause.getCause()) {
      if (cause.getClass().getName().equals("org.apache.spark.TaskKilledException")) {
        return true;
      }
    }
    return Thread.currentThread().isInterrupted();
  }

  @Override
  public long bytesRead() {
    return 0;
  }

  @Override
  protected void closeReadSource() {}

  @Override
  protected Schema readSchema() {
    return schema;
  }
}
