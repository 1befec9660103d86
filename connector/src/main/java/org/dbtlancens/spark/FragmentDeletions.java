package org.dbtlancens.spark;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.lance.Fragment;
import org.lance.FragmentMetadata;
import org.lance.fragment.DeletionFile;

/**
 * Deletion files written by Spark tasks inside the JVM: the rows an incremental run or a snapshot
 * replaces, named by their row addresses, leave their fragments without a Python worker (pylance's
 * deletions took a merge of 1,000,000 rows 2 s of its wall time, most of it moving offsets into
 * Python). Nothing is committed: each task returns, per fragment it touched, the new deletion
 * file's description, and the driver commits them with the new rows in one {@code Update}.
 *
 * <p>A task gets whole fragments (the addresses are partitioned by fragment id) and writes one
 * deletion file per fragment, merged by lance-core with the fragment's existing one. When
 * {@code checkRepeats} is set and an address occurs twice (a merge whose model rows match one
 * stored row twice), the task writes nothing and answers {@link #REPEATED}. A deletion file of a
 * version that never lands is referenced by no version and goes with the next cleanup, as a data
 * file does.
 */
public final class FragmentDeletions implements MapPartitionsFunction<Row, String> {
  private static final long serialVersionUID = 1L;
  /** A task's answer when an address occurs twice. */
  public static final String REPEATED = "!repeated";
  /** The engine's crash-test hook (dbt/adapters/lancens/namespace/versions.py, pause_point). */
  private static final String PAUSE_ENV = "LANCENS_PAUSE_AT_STEP";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ReadTarget target;
  private final long version;
  private final boolean checkRepeats;

  private FragmentDeletions(ReadTarget target, long version, boolean checkRepeats) {
    this.target = target;
    this.version = version;
    this.checkRepeats = checkRepeats;
  }

  /**
   * Deletes the rows {@code grouped} names (columns: fragment id, row offset; partitioned by
   * fragment id) from {@code version} of the dataset at {@code uri}; one JSON object per touched
   * fragment ({@code fragment_id}, {@code deletion_file} as pylance writes it, null when no row is
   * left), or {@link #REPEATED}.
   */
  public static List<String> delete(
      Dataset<Row> grouped, String uri, String storageOptions, long version, boolean checkRepeats) {
    ReadTarget target = ReadTarget.of(uri, storageOptions);
    return grouped
        .mapPartitions(new FragmentDeletions(target, version, checkRepeats), Encoders.STRING())
        .collectAsList();
  }

  @Override
  public Iterator<String> call(Iterator<Row> rows) {
    Map<Integer, List<Integer>> offsets = new HashMap<>();
    while (rows.hasNext()) {
      Row row = rows.next();
      offsets.computeIfAbsent(Math.toIntExact(row.getLong(0)), id -> new ArrayList<>())
          .add(Math.toIntExact(row.getLong(1)));
    }
    if (offsets.isEmpty()) {
      return Collections.emptyIterator();
    }
    for (List<Integer> fragmentOffsets : offsets.values()) {
      Collections.sort(fragmentOffsets);
      if (checkRepeats && repeats(fragmentOffsets)) {
        return List.of(REPEATED).iterator();
      }
    }
    List<String> answers = new ArrayList<>();
    try (Datasets.Lease lease = Datasets.lease(target, OptionalLong.of(version))) {
      for (Map.Entry<Integer, List<Integer>> entry : offsets.entrySet()) {
        Fragment fragment;
        try {
          fragment = new Fragment(lease.dataset(), entry.getKey());
        } catch (RuntimeException e) {
          throw new IllegalStateException(
              "fragment " + entry.getKey() + " is not in version " + version + " of " + target.uri(), e);
        }
        FragmentMetadata updated = fragment.deleteRows(distinct(entry.getValue()));
        pausePoint("deletions_written");
        answers.add(answer(entry.getKey(), updated));
      }
    }
    return answers.iterator();
  }

  private static boolean repeats(List<Integer> sorted) {
    for (int i = 1; i < sorted.size(); i++) {
      if (sorted.get(i).equals(sorted.get(i - 1))) {
        return true;
      }
    }
    return false;
  }

  private static List<Integer> distinct(List<Integer> sorted) {
    List<Integer> kept = new ArrayList<>(sorted.size());
    for (Integer offset : sorted) {
      if (kept.isEmpty() || !kept.get(kept.size() - 1).equals(offset)) {
        kept.add(offset);
      }
    }
    return kept;
  }

  /** The fragment's answer: its new deletion file in pylance's JSON, or null (no row left). */
  private static String answer(int fragmentId, FragmentMetadata updated) {
    ObjectNode node = JSON.createObjectNode();
    node.put("fragment_id", fragmentId);
    DeletionFile file = updated == null ? null : updated.getDeletionFile();
    if (updated == null) {
      node.putNull("deletion_file");
    } else if (file == null) {
      throw new IllegalStateException("lance-core deleted rows of fragment " + fragmentId + " without a deletion file");
    } else {
      ObjectNode deletion = node.putObject("deletion_file");
      deletion.put("read_version", file.getReadVersion());
      deletion.put("id", new BigInteger(Long.toUnsignedString(file.getId())));
      deletion.put("file_type", file.getFileType().name().toLowerCase(Locale.ROOT));
      deletion.put("num_deleted_rows", file.getNumDeletedRows());
      if (file.getBaseId().isPresent()) {
        deletion.put("base_id", file.getBaseId().get());
      } else {
        deletion.putNull("base_id");
      }
    }
    return node.toString();
  }

  /**
   * The engine's crash-test hook, here where the deletion file is written: when the environment
   * names {@code step}, write the JVM's process id to {@code <dir>/<step>} and block until killed.
   */
  private static void pausePoint(String step) {
    String wanted = System.getenv(PAUSE_ENV);
    if (wanted == null || !wanted.startsWith(step + ":")) {
      return;
    }
    Path marker = Path.of(wanted.substring(step.length() + 1), step);
    try {
      Files.writeString(marker, Long.toString(ProcessHandle.current().pid()), StandardCharsets.UTF_8);
      new CountDownLatch(1).await();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted at the crash-test pause " + step, e);
    }
  }
}
