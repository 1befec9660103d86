package org.dbtlancens.spark;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.Base64;
import java.util.Map;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * Writes a DataFrame's rows as Lance data files from Spark's executors, without committing: what
 * the adapter calls through py4j ({@code dbt/adapters/lancens/spark/jvm_writer.py}), which runs the
 * tasks over the frame's internal rows and commits their fragments in the dbt process.
 *
 * <p>Each task copies its rows into Arrow batches of the table's own schema (sent from Python as an
 * Arrow IPC stream, so field metadata and nullability are the table's) and has lance-core write
 * them in the table's own data-file version, which the caller always names: lance-core 7 would
 * otherwise write 2.1 files into a 2.2 table, which pylance then commits with a reader flag
 * lance-core can never read again.
 */
public final class FragmentWriter {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int BATCH_ROWS = 8192;
  /** How a task's result that is its failure, not a fragment, begins ({@link #failed}). */
  public static final String FAILED = "!failed:";

  private FragmentWriter() {}

  /**
   * Why {@code frame}'s rows cannot be written into a table of the schema {@code schemaStream}
   * (an Arrow IPC stream without batches) by the JVM writer, or null when they can.
   */
  public static String unsupported(Dataset<Row> frame, byte[] schemaStream) {
    return ArrowRowWriter.unsupported(frame.schema(), FragmentWriteTask.schema(schemaStream));
  }

  /**
   * The task that writes partitions of {@code frame} (columns in the schema's order) to the table
   * at {@code uri}, for {@code frame.queryExecution().toRdd().toJavaRDD().mapPartitions}.
   * {@code written}: a collection accumulator counting failed tasks' values (see
   * {@link FragmentWriteTask}).
   */
  public static FlatMapFunction<java.util.Iterator<InternalRow>, String> task(
      Dataset<Row> frame,
      String uri,
      byte[] schemaStream,
      String storageVersion,
      String storageOptionsJson,
      int maxRowsPerFile,
      boolean overwrite,
      Serializable written) {
    if (storageVersion == null || storageVersion.isEmpty()) {
      throw new IllegalArgumentException("a JVM write must name the table's data storage version");
    }
    String reason = unsupported(frame, schemaStream);
    if (reason != null) {
      throw new IllegalArgumentException("the JVM writer cannot write this data: " + reason);
    }
    return new FragmentWriteTask(
        uri,
        schemaStream,
        frame.schema(),
        storageVersion,
        options(storageOptionsJson),
        maxRowsPerFile,
        BATCH_ROWS,
        overwrite,
        written);
  }

  /**
   * A task's failure as its last result: {@link #FAILED} and the exception, Java-serialised in
   * Base64, so that the driver can raise the very exception the task met ({@link #rethrow}).
   */
  static String failed(RuntimeException failure) {
    byte[] bytes;
    try {
      bytes = serialised(failure);
    } catch (IllegalStateException e) { // an exception holding something not serialisable
      bytes = serialised(new IllegalStateException(failure.toString()));
    }
    return FAILED + Base64.getEncoder().encodeToString(bytes);
  }

  private static byte[] serialised(RuntimeException failure) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
      out.writeObject(failure);
    } catch (IOException e) {
      throw new IllegalStateException("cannot serialise a task's failure", e);
    }
    return bytes.toByteArray();
  }

  /** Throws the failure a task reported ({@link #failed}), on the driver. */
  public static void rethrow(String result) {
    if (!result.startsWith(FAILED)) {
      throw new IllegalArgumentException("not a task's failure: " + result);
    }
    byte[] bytes = Base64.getDecoder().decode(result.substring(FAILED.length()));
    Object failure;
    try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
      failure = in.readObject();
    } catch (IOException | ClassNotFoundException e) {
      throw new IllegalStateException("a task of the JVM write failed; its error cannot be read", e);
    }
    throw (RuntimeException) failure;
  }

  private static Map<String, String> options(String json) {
    if (json == null || json.isEmpty()) {
      return Map.of();
    }
    try {
      return JSON.readValue(json, new TypeReference<Map<String, String>>() {});
    } catch (IOException e) {
      throw new IllegalArgumentException("storage options are not a JSON object of strings: " + json, e);
    }
  }
}
