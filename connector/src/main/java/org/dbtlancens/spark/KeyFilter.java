package org.dbtlancens.spark;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.spark.api.java.function.MapPartitionsFunction;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.util.sketch.BloomFilter;
import org.apache.spark.util.sketch.IncompatibleMergeException;

/**
 * Drops the rows of a table whose key is certainly not among a frame's keys, before a join
 * shuffles them. A merge of 1,000,000 rows into a 10,000,000-row table otherwise shuffles and
 * sorts every stored key to find the few that match; reading the keys is cheap, moving them is
 * not (docs/materializations.md, "How a merge finds its rows").
 *
 * <p>One Spark job summarises the frame's keys: each task builds a Bloom filter of their 64-bit
 * hashes ({@code xxhash64}) and each key column's smallest and largest value, one task merges the
 * tasks' summaries, and the driver receives that one (a few MB at most, never the keys). The table's rows are then kept where
 * every key column lies in its range (a filter Lance applies while it scans, so rows outside it
 * never reach Spark) and the key's hash may be in the filter. A key of the frame always passes, so
 * the join that follows finds the same matches; about {@link #FALSE_POSITIVES} of the others pass
 * too and the join drops them. The hashes are equal only for equal values of equal types: the
 * caller narrows only keys whose columns have the same type on both sides and whose equality is the
 * equality of their bytes (no floating point, no collation). A NULL key column of the frame keeps
 * the table's NULLs there too, for a join that matches NULL with NULL ({@code <=>}).
 */
public final class KeyFilter {
  /** The share of rows without a matching key the filter lets through. */
  static final double FALSE_POSITIVES = 0.03;

  private static final AtomicLong SUMMARIES = new AtomicLong();

  private KeyFilter() {}

  /** How many key summaries this JVM's driver has built: what a test counts. */
  public static long summaries() {
    return SUMMARIES.get();
  }

  /**
   * The rows of {@code rows} whose {@code columns} may equal the same columns of some row of
   * {@code keys}; {@code expected}: how many keys the Bloom filter is sized for.
   */
  public static Dataset<Row> mayMatch(Dataset<Row> rows, List<String> columns, Dataset<Row> keys, long expected) {
    if (columns.isEmpty()) {
      throw new IllegalArgumentException("a key filter needs at least one key column");
    }
    Column[] summarised = new Column[columns.size() + 1];
    summarised[0] = hashOf(columns);
    for (int i = 0; i < columns.size(); i++) {
      summarised[i + 1] = column(columns.get(i));
    }
    long sized = Math.max(expected, 1L);
    // every task's summary is merged in one task of a second stage, so the driver receives one
    // (a task per partition of the keys would each send a whole Bloom filter); none when no task ran
    List<byte[]> merged =
        keys.select(summarised)
            .mapPartitions(new Summarise(columns.size(), sized), Encoders.BINARY())
            .repartition(1)
            .mapPartitions(new MergeSummaries(), Encoders.BINARY())
            .collectAsList();
    Summary summary = merged.isEmpty() ? new Summary(columns.size(), sized) : Summary.of(merged.get(0));
    SUMMARIES.incrementAndGet();
    if (summary.empty()) {
      return rows.filter(functions.lit(false)); // no key: no stored row can match
    }
    UserDefinedFunction mayContain = functions.udf(new MayContain(summary.filter), DataTypes.BooleanType);
    return rows.filter(summary.ranges(columns)).filter(mayContain.apply(hashOf(columns)));
  }

  private static Column column(String name) {
    return functions.col("`" + name.replace("`", "``") + "`");
  }

  private static Column hashOf(List<String> names) {
    return functions.xxhash64(names.stream().map(KeyFilter::column).toArray(Column[]::new));
  }

  /** One task's part of the summary: its rows are (hash, key columns...). */
  private static final class Summarise implements MapPartitionsFunction<Row, byte[]> {
    private static final long serialVersionUID = 1L;
    private final int columns;
    private final long expected;

    Summarise(int columns, long expected) {
      this.columns = columns;
      this.expected = expected;
    }

    @Override
    public Iterator<byte[]> call(Iterator<Row> rows) {
      Summary summary = new Summary(columns, expected);
      while (rows.hasNext()) {
        summary.add(rows.next());
      }
      return List.of(summary.bytes()).iterator();
    }
  }

  /** The one task that merges every task's summary into one. */
  private static final class MergeSummaries implements MapPartitionsFunction<byte[], byte[]> {
    private static final long serialVersionUID = 1L;

    @Override
    public Iterator<byte[]> call(Iterator<byte[]> parts) {
      if (!parts.hasNext()) {
        return Collections.emptyIterator();
      }
      Summary merged = Summary.of(parts.next());
      while (parts.hasNext()) {
        merged.merge(Summary.of(parts.next()));
      }
      return List.of(merged.bytes()).iterator();
    }
  }

  /** Keys seen: their hashes' Bloom filter, and per key column its range and whether it held NULL. */
  private static final class Summary implements Serializable {
    private static final long serialVersionUID = 1L;
    final BloomFilter filter;
    final Object[] low;
    final Object[] high;
    final boolean[] nulls;
    final boolean[] unordered; // a column whose values have no order here: no range for it
    long rows;

    Summary(int columns, long expected) {
      filter = BloomFilter.create(expected, FALSE_POSITIVES);
      low = new Object[columns];
      high = new Object[columns];
      nulls = new boolean[columns];
      unordered = new boolean[columns];
    }

    void add(Row row) {
      rows++;
      filter.putLong(row.getLong(0));
      for (int i = 0; i < low.length; i++) {
        Object value = row.get(i + 1);
        if (value == null) {
          nulls[i] = true;
        } else if (!(value instanceof Comparable)) {
          unordered[i] = true;
        } else {
          widen(i, value, value);
        }
      }
    }

    void merge(Summary other) {
      rows += other.rows;
      try {
        filter.mergeInPlace(other.filter);
      } catch (IncompatibleMergeException e) {
        throw new IllegalStateException("the tasks' key filters were sized differently", e);
      }
      for (int i = 0; i < low.length; i++) {
        nulls[i] |= other.nulls[i];
        unordered[i] |= other.unordered[i];
        if (other.low[i] != null) {
          widen(i, other.low[i], other.high[i]);
        }
      }
    }

    private void widen(int i, Object smallest, Object largest) {
      if (low[i] == null || compare(smallest, low[i]) < 0) {
        low[i] = smallest;
      }
      if (high[i] == null || compare(largest, high[i]) > 0) {
        high[i] = largest;
      }
    }

    /** Spark's order: strings by their UTF-8 bytes (Java's compareTo orders UTF-16 units). */
    @SuppressWarnings("unchecked")
    private static int compare(Object a, Object b) {
      if (a instanceof String left && b instanceof String right) {
        return Arrays.compareUnsigned(
            left.getBytes(StandardCharsets.UTF_8), right.getBytes(StandardCharsets.UTF_8));
      }
      return ((Comparable<Object>) a).compareTo(b);
    }

    boolean empty() {
      return rows == 0;
    }

    /** Each key column within the frame's range (or NULL, where the frame had NULLs there). */
    Column ranges(List<String> columns) {
      Column all = functions.lit(true);
      for (int i = 0; i < columns.size(); i++) {
        if (unordered[i]) {
          continue;
        }
        Column column = column(columns.get(i));
        Column within;
        if (low[i] == null) {
          within = column.isNull(); // only NULLs in the frame's column
        } else {
          within = column.geq(functions.lit(low[i])).and(column.leq(functions.lit(high[i])));
          if (nulls[i]) {
            within = within.or(column.isNull());
          }
        }
        all = all.and(within);
      }
      return all;
    }

    byte[] bytes() {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      try (ObjectOutputStream objects = new ObjectOutputStream(out)) {
        objects.writeObject(this);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return out.toByteArray();
    }

    static Summary of(byte[] bytes) {
      try (ObjectInputStream objects = new ObjectInputStream(new ByteArrayInputStream(bytes))) {
        return (Summary) objects.readObject();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      } catch (ClassNotFoundException e) {
        throw new IllegalStateException("a key summary from a task cannot be read", e);
      }
    }
  }

  /** Whether a hash may be in the filter (the function Spark runs per row of the table). */
  private static final class MayContain implements UDF1<Long, Boolean> {
    private static final long serialVersionUID = 1L;
    private final BloomFilter filter;

    MayContain(BloomFilter filter) {
      this.filter = filter;
    }

    @Override
    public Boolean call(Long hash) {
      return filter.mightContainLong(hash);
    }
  }
}
