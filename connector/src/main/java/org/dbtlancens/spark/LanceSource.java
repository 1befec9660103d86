package org.dbtlancens.spark;

import java.util.Map;
import java.util.OptionalLong;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The JVM reader of a Lance dataset: {@code spark.read.format("lance_jvm").load(uri)}, or by class
 * name. Options: {@code path}, {@code version} or {@code timestamp} (ISO-8601, UTC without a zone:
 * the latest version committed at or before it), else the latest, resolved when the scan is planned;
 * {@code storage_options} (a JSON object, as the Python data source takes it).
 *
 * <p>It is not called {@code lance}: that name is the project's Python data source, which stays
 * the fallback, and a JVM source of the same name would shadow it.
 */
public final class LanceSource implements TableProvider, DataSourceRegister {
  /** Option: refuse, with {@link ReadCheck}'s reason, a table this lance-core cannot read. */
  static final String READ_CHECK = "read_check";

  /** What the refusal's message starts with; the adapter reads the reason after it. */
  static final String UNREADABLE = "lance_jvm cannot read this table: ";

  @Override
  public String shortName() {
    return "lance_jvm";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    ReadTarget target = ReadTarget.parse(options);
    if (options.getBoolean(READ_CHECK, false)) {
      // ReadCheck asked through the source, by a client with no py4j gateway (Spark Connect)
      long version = target.pinnedVersion() == null ? -1 : target.pinnedVersion();
      String reason = ReadCheck.unreadable(target.uri(), version, options.get("storage_options"));
      if (reason != null) {
        throw new IllegalStateException(UNREADABLE + reason);
      }
    }
    OptionalLong version = target.asOf() == null ? target.version() : OptionalLong.of(Datasets.versionAt(target));
    return SchemaMapping.toSpark(Datasets.schema(target, version));
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new LanceTable(ReadTarget.parse(new CaseInsensitiveStringMap(properties)), schema, properties);
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true; // a catalog entry carries the schema: no dataset is opened to infer it again
  }
}
