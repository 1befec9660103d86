package org.dbtlancens.spark;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.c.ArrowArrayStream;
import org.apache.arrow.c.Data;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ArrowStreamReader;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.StructType;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.WriteParams;

/**
 * What one Spark task runs: its partition's rows become Lance data files at the table's location
 * (not committed), and the task returns their fragment metadata as JSON.
 *
 * <p>Every fragment written is also added to {@code written}, a Spark collection accumulator
 * registered to count failed tasks' values too: when this task fails after Lance finished files
 * (the query failed midway, a NULL in a NOT NULL column), the driver still learns them and deletes
 * them, as it deletes a retried task's first files once the write succeeded. It is held as a plain
 * object and called by name because the connector compiles without spark-core (only Spark SQL's
 * jars are served to the build).
 */
final class FragmentWriteTask implements FlatMapFunction<Iterator<InternalRow>, String> {
  private static final long serialVersionUID = 1L;

  private final String uri;
  private final byte[] schemaMessage;
  private final StructType spark;
  private final String storageVersion;
  private final Map<String, String> storageOptions;
  private final int maxRowsPerFile;
  private final int batchRows;
  private final boolean overwrite;
  private final Serializable written;

  FragmentWriteTask(
      String uri,
      byte[] schemaMessage,
      StructType spark,
      String storageVersion,
      Map<String, String> storageOptions,
      int maxRowsPerFile,
      int batchRows,
      boolean overwrite,
      Serializable written) {
    this.uri = uri;
    this.schemaMessage = schemaMessage;
    this.spark = spark;
    this.storageVersion = storageVersion;
    this.storageOptions = storageOptions;
    this.maxRowsPerFile = maxRowsPerFile;
    this.batchRows = batchRows;
    this.overwrite = overwrite;
    this.written = written;
  }

  /** The schema of an Arrow IPC stream without batches (how pyarrow sends the table's schema). */
  static Schema schema(byte[] stream) {
    try (BufferAllocator allocator = new RootAllocator();
        ArrowStreamReader reader = new ArrowStreamReader(new ByteArrayInputStream(stream), allocator)) {
      return reader.getVectorSchemaRoot().getSchema();
    } catch (IOException e) {
      throw new IllegalArgumentException("the table's schema is not an Arrow IPC stream", e);
    }
  }

  private void report(String fragment) {
    try {
      written.getClass().getMethod("add", Object.class).invoke(written, fragment);
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot report a written fragment to the driver's accumulator", e);
    }
  }

  @Override
  public Iterator<String> call(Iterator<InternalRow> rows) {
    List<String> fragments = new ArrayList<>();
    RuntimeException failure;
    try {
      failure = write(rows, fragments);
    } catch (RuntimeException e) {
      failure = e;
    }
    if (failure != null) {
      if (WriteBatches.killed(failure)) {
        throw failure; // Spark is stopping this task; it no longer hears of its results
      }
      fragments.add(FragmentWriter.failed(failure));
    }
    return fragments.iterator();
  }

  /**
   * Writes the rows, adding each fragment's JSON to {@code fragments}; what failed the rows (the
   * query upstream, a NULL in a NOT NULL column), or null. The failure is not thrown: a task that
   * fails makes Spark fail the job at once, and the tasks still running then finish files Spark no
   * longer reports to the driver. So every task ends normally, and a failed one's last result is
   * the failure ({@link FragmentWriter#failed}), which the driver raises once it has deleted every
   * task's files.
   */
  private RuntimeException write(Iterator<InternalRow> rows, List<String> fragments) {
    if (!rows.hasNext()) {
      return null; // no rows, no file (as the Python writer)
    }
    try (BufferAllocator allocator = Datasets.allocator("fragment-write");
        ArrowArrayStream stream = ArrowArrayStream.allocateNew(allocator)) {
      WriteBatches batches = new WriteBatches(allocator, schema(schemaMessage), spark, rows, batchRows);
      Data.exportArrayStream(allocator, batches, stream);
      List<FragmentMetadata> made =
          Fragment.write()
              .datasetUri(uri)
              .allocator(allocator)
              .data(stream)
              .storageOptions(storageOptions)
              .mode(overwrite ? WriteParams.WriteMode.OVERWRITE : WriteParams.WriteMode.APPEND)
              .dataStorageVersion(storageVersion)
              .maxRowsPerFile(maxRowsPerFile)
              .execute();
      for (FragmentMetadata fragment : made) {
        String json = FragmentJson.of(fragment);
        report(json);
        fragments.add(json);
      }
      return batches.failure();
    }
  }
}
