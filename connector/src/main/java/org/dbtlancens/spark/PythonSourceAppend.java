package org.dbtlancens.spark;

import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.connector.write.V1Write;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.sources.InsertableRelation;

/**
 * A Spark {@code INSERT INTO} a table the connector reads, handed to the project's Python data
 * source ({@code lance}), which writes the fragments and lands the commit through the engine's
 * commit hook: writes stay in one place (the engine's commit path) until the JVM writes itself.
 * The options are the table's own (path, storage options, commit hook and its arguments), which
 * the adapter gives a catalog table at its latest version; a pinned version takes no writes.
 */
final class PythonSourceAppend implements WriteBuilder {
  static final String PYTHON_SOURCE = "lance";

  private final Map<String, String> options;

  PythonSourceAppend(Map<String, String> options) {
    this.options = options;
  }

  @Override
  public Write build() {
    return (V1Write) () -> (InsertableRelation) this::insert;
  }

  private void insert(Dataset<Row> data, boolean overwrite) {
    if (overwrite) {
      throw new UnsupportedOperationException("INSERT OVERWRITE of a Lance table read by the JVM connector");
    }
    data.write().format(PYTHON_SOURCE).options(options).mode("append").save();
  }
}
