package org.dbtlancens.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Plans one scan: the version was resolved when the builder was made (so every partition reads
 * the same one), then Spark pushes the columns it needs, the predicates Lance can evaluate exactly
 * ({@link FilterTranslator}; Spark keeps the rest) and, when no predicate stayed with Spark, a limit.
 *
 * <p>The input partitions are planned here too ({@link ReadPlan}): when a fragment is read as
 * several row slices, no filter is pushed (a slice's offset would count rows after it), so Spark
 * filters those rows itself.
 *
 * <p>Filters arrive as Spark's data source filters ({@link SupportsPushDownFilters}), each turned
 * into the predicate {@link FilterTranslator} reads with {@link Filter#toV2()}: everything it
 * translates has such a form. Not {@code SupportsPushDownV2Filters}: Spark 4.0 builds those
 * predicates with an assertion that fails the whole query when a condition holds a NULL boolean
 * inside OR/AND/NOT (a DELETE's {@code name = NULL}, folded to NULL), where the V1 translation
 * simply leaves that filter to Spark.
 */
final class LanceScanBuilder
    implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownFilters, SupportsPushDownLimit {
  private final ReadTarget target;
  private final Datasets.Planned planned;
  private final StructType schema;
  private final List<ReadPlan.Slice> slices;
  private StructType required;
  private boolean rowAddress;
  private Filter[] pushed = new Filter[0];
  private String filter;
  private Integer limit;

  LanceScanBuilder(ReadTarget target, StructType schema, Datasets.Planned planned) {
    this.target = target;
    this.planned = planned;
    this.schema = schema;
    this.required = schema;
    this.slices = ReadPlan.slices(planned.fragments(), schema, ReadPlan.maxSliceBytes(planned.fragments(), schema));
  }

  private boolean sliced() {
    return slices.size() != planned.fragments().size();
  }

  @Override
  public void pruneColumns(StructType requiredSchema) {
    List<StructField> data = new ArrayList<>();
    rowAddress = false;
    for (StructField field : requiredSchema.fields()) {
      if (field.name().equals(LanceTable.ROW_ADDRESS)) {
        rowAddress = true;
      } else {
        data.add(field);
      }
    }
    required = new StructType(data.toArray(new StructField[0]));
  }

  @Override
  public Filter[] pushFilters(Filter[] filters) {
    if (sliced()) {
      return filters; // a slice's offset would count rows after the filter: Spark filters instead
    }
    FilterTranslator translator = new FilterTranslator(planned.schema());
    List<Filter> kept = new ArrayList<>();
    List<Filter> accepted = new ArrayList<>();
    List<String> sql = new ArrayList<>();
    for (Filter predicate : filters) {
      String translated = translator.translate(predicate.toV2());
      if (translated == null) {
        kept.add(predicate);
      } else {
        accepted.add(predicate);
        sql.add("(" + translated + ")");
      }
    }
    pushed = accepted.toArray(new Filter[0]);
    filter = sql.isEmpty() ? null : String.join(" AND ", sql);
    return kept.toArray(new Filter[0]);
  }

  @Override
  public Filter[] pushedFilters() {
    return pushed;
  }

  @Override
  public boolean pushLimit(int rows) {
    limit = rows;
    return true;
  }

  @Override
  public boolean isPartiallyPushed() {
    return true; // each fragment stops at the limit; Spark still cuts the union of them
  }

  @Override
  public Scan build() {
    return new LanceScan(target, planned, slices, schema, required, rowAddress, filter, limit);
  }
}
