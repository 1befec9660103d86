package org.dbtlancens.spark;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.ArrowReader;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.lance.Dataset;
import org.lance.Fragment;
import org.lance.ipc.LanceScanner;
import org.lance.ipc.ScanOptions;

/**
 * Scans one fragment of the pinned version and hands Spark each Arrow batch as a
 * {@link ColumnarBatch} of {@link LanceColumnVector}s, in the order of the scan's schema. Lance
 * applies the fragment's deletion file, the pushed filter, the slice's row range and the limit.
 */
final class FragmentReader implements PartitionReader<ColumnarBatch> {
  private static final long BATCH_ROWS = 8192;

  private final FragmentPartition partition;
  private final Datasets.Lease lease;
  private final Dataset dataset;
  private final LanceScanner scanner;
  private final ArrowReader reader;
  private ColumnarBatch current;

  FragmentReader(FragmentPartition partition) {
    this.partition = partition;
    // The version as this JVM holds it (the driver's planning opened it; an executor opens it
    // once for all its tasks): a task's own open was a HEAD and a GET on S3 each time.
    this.lease = Datasets.lease(partition.target(), OptionalLong.of(partition.version()));
    this.dataset = lease.dataset();
    ScanOptions.Builder options =
        new ScanOptions.Builder()
            .columns(List.of(partition.columns().fieldNames()))
            .batchSize(BATCH_ROWS)
            .withRowAddress(partition.rowAddress() || partition.columns().fields().length == 0);
    if (partition.filter() != null) {
      options.filter(partition.filter());
    }
    if (partition.offset() > 0) {
      options.offset(partition.offset());
    }
    Long limit = partition.sliceRows();
    if (partition.limit() != null) {
      limit = limit == null ? partition.limit().longValue() : Math.min(limit, partition.limit());
    }
    if (limit != null) {
      options.limit(limit);
    }
    this.scanner = new Fragment(dataset, partition.fragmentId()).newScan(options.build());
    this.reader = scanner.scanBatches();
  }

  @Override
  public boolean next() throws IOException {
    if (!reader.loadNextBatch()) {
      return false;
    }
    VectorSchemaRoot root = reader.getVectorSchemaRoot();
    List<ColumnVector> vectors = new ArrayList<>();
    for (StructField field : partition.columns().fields()) {
      vectors.add(new LanceColumnVector(vector(root, field.name()), field.dataType()));
    }
    if (partition.rowAddress()) {
      vectors.add(new LanceColumnVector(vector(root, LanceTable.ROW_ADDRESS), DataTypes.LongType));
    }
    current = new ColumnarBatch(vectors.toArray(new ColumnVector[0]), root.getRowCount());
    return true;
  }

  private static FieldVector vector(VectorSchemaRoot root, String name) throws IOException {
    FieldVector vector = root.getVector(name);
    if (vector == null) {
      throw new IOException("the Lance scan returned no column " + name + " (it has " + root.getSchema() + ")");
    }
    return vector;
  }

  @Override
  public ColumnarBatch get() {
    return current;
  }

  @Override
  public void close() throws IOException {
    try {
      reader.close();
      scanner.close();
    } catch (IOException | RuntimeException e) {
      throw e;
    } catch (Exception e) {
      throw new IOException("closing the scan of fragment " + partition.fragmentId(), e);
    } finally {
      lease.close();
    }
  }
}
