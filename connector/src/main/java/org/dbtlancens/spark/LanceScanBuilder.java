package org.dbtlancens.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownLimit;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.connector.read.SupportsPushDownV2Filters;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Plans one scan: the version was resolved when the builder was made (so every partition reads
 * the same one), then Spark pushes the columns it needs, the predicates Lance can evaluate exactly
 * ({@link FilterTranslator}; Spark keeps the rest) and, when no predicate stayed with Spark, a limit.
 */
final class LanceScanBuilder
    implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownV2Filters, SupportsPushDownLimit {
  private final ReadTarget target;
  private final Datasets.Planned planned;
  private StructType required;
  private boolean rowAddress;
  private Predicate[] pushed = new Predicate[0];
  private String filter;
  private Integer limit;

  LanceScanBuilder(ReadTarget target, StructType schema, Datasets.Planned planned) {
    this.target = target;
    this.planned = planned;
    this.required = schema;
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
  public Predicate[] pushPredicates(Predicate[] predicates) {
    FilterTranslator translator = new FilterTranslator(planned.schema());
    List<Predicate> kept = new ArrayList<>();
    List<Predicate> accepted = new ArrayList<>();
    List<String> sql = new ArrayList<>();
    for (Predicate predicate : predicates) {
      String translated = translator.translate(predicate);
      if (translated == null) {
        kept.add(predicate);
      } else {
        accepted.add(predicate);
        sql.add("(" + translated + ")");
      }
    }
    pushed = accepted.toArray(new Predicate[0]);
    filter = sql.isEmpty() ? null : String.join(" AND ", sql);
    return kept.toArray(new Predicate[0]);
  }

  @Override
  public Predicate[] pushedPredicates() {
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
    return new LanceScan(
        target, planned.version(), planned.fragmentIds(), required, rowAddress, filter, limit);
  }
}
