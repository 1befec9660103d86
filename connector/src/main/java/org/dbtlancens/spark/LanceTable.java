package org.dbtlancens.spark;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.MetadataColumn;
import org.apache.spark.sql.connector.catalog.SupportsMetadataColumns;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Lance dataset as a Spark table that reads; a Spark {@code INSERT INTO} it (latest version only)
 * goes to the Python data source and the engine's commit path ({@link PythonSourceAppend}). Its metadata column {@code _rowaddr} is Lance's row address (fragment id
 * &lt;&lt; 32 | offset in the fragment), which the incremental strategies use to name exact rows of
 * the version a query read.
 */
final class LanceTable implements SupportsRead, SupportsWrite, SupportsMetadataColumns {
  static final String ROW_ADDRESS = "_rowaddr";

  private final ReadTarget target;
  private final StructType schema;
  private final Map<String, String> options;

  LanceTable(ReadTarget target, StructType schema, Map<String, String> options) {
    this.target = target;
    this.schema = schema;
    this.options = new HashMap<>(options);
  }

  @Override
  public String name() {
    if (target.pinnedVersion() != null) {
      return target.uri() + "@" + target.pinnedVersion();
    }
    return target.asOf() == null ? target.uri() : target.uri() + "@" + target.asOf();
  }

  @Override
  public StructType schema() {
    return schema;
  }

  @Override
  public Set<TableCapability> capabilities() {
    return target.pinnedVersion() == null && target.asOf() == null
        ? EnumSet.of(TableCapability.BATCH_READ, TableCapability.V1_BATCH_WRITE)
        : EnumSet.of(TableCapability.BATCH_READ);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    if (target.pinnedVersion() != null || target.asOf() != null) {
      throw new UnsupportedOperationException("a pinned version of a Lance table takes no writes: " + name());
    }
    return new PythonSourceAppend(options);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    // A catalog table's `WITH ('version' = ...)` or `('timestamp' = ...)` arrives here, not in the
    // table's own options: it replaces the table's pin for this scan.
    ReadTarget scanned = target.travel(options);
    return new LanceScanBuilder(scanned, schema, Datasets.plan(scanned));
  }

  @Override
  public MetadataColumn[] metadataColumns() {
    return new MetadataColumn[] {
      new MetadataColumn() {
        @Override
        public String name() {
          return ROW_ADDRESS;
        }

        @Override
        public DataType dataType() {
          return DataTypes.LongType;
        }

        @Override
        public boolean isNullable() {
          return false;
        }

        @Override
        public String comment() {
          return "Lance's row address: fragment id << 32 | offset in the fragment";
        }
      }
    };
  }
}
