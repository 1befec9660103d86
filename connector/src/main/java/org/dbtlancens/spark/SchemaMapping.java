package org.dbtlancens.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.MetadataBuilder;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A Lance (Arrow) schema as the Spark schema the Python data source reports for it
 * ({@code spark/types.py}): both paths must give a table the same Spark types, so the rules are the
 * same (unsigned integers widen, uint64 becomes decimal(20,0), float16 becomes float, every list
 * kind becomes array, and a top-level fixed-size list keeps its size in the field metadata).
 */
final class SchemaMapping {
  static final String FIXED_SIZE_METADATA = "lance.fixed_size_list";

  private SchemaMapping() {}

  static StructType toSpark(Schema schema) {
    List<StructField> fields = new ArrayList<>();
    for (Field field : schema.getFields()) {
      Metadata metadata = Metadata.empty();
      if (field.getType() instanceof ArrowType.FixedSizeList fixed) {
        metadata = new MetadataBuilder().putLong(FIXED_SIZE_METADATA, fixed.getListSize()).build();
      }
      fields.add(new StructField(field.getName(), toSpark(field), field.isNullable(), metadata));
    }
    return new StructType(fields.toArray(new StructField[0]));
  }

  static DataType toSpark(Field field) {
    ArrowType type = field.getType();
    if (field.getDictionary() != null) {
      // the Python source reads it as its values' type (spark/types.py); this reader has no decoder,
      // so ReadCheck sends the table to the Python source rather than read the indices as numbers
      throw new UnsupportedOperationException(
          "column " + field.getName() + " is dictionary-encoded, which the JVM connector does not read");
    }
    if (type instanceof ArrowType.Int integer) {
      return integer(integer, field);
    }
    if (type instanceof ArrowType.Bool) {
      return DataTypes.BooleanType;
    }
    if (type instanceof ArrowType.FloatingPoint floating) {
      return floating.getPrecision() == FloatingPointPrecision.DOUBLE ? DataTypes.DoubleType : DataTypes.FloatType;
    }
    if (type instanceof ArrowType.Decimal decimal) {
      if (decimal.getBitWidth() != 128 || decimal.getPrecision() > 38) {
        throw unsupported(field);
      }
      return DataTypes.createDecimalType(decimal.getPrecision(), decimal.getScale());
    }
    if (type instanceof ArrowType.Utf8 || type instanceof ArrowType.LargeUtf8) {
      return DataTypes.StringType;
    }
    if (type instanceof ArrowType.Binary
        || type instanceof ArrowType.LargeBinary
        || type instanceof ArrowType.FixedSizeBinary) {
      return DataTypes.BinaryType;
    }
    if (type instanceof ArrowType.Date) {
      return DataTypes.DateType;
    }
    if (type instanceof ArrowType.Timestamp timestamp) {
      return timestamp.getTimezone() == null ? DataTypes.TimestampNTZType : DataTypes.TimestampType;
    }
    if (type instanceof ArrowType.Null) {
      return DataTypes.NullType;
    }
    if (type instanceof ArrowType.Struct) {
      List<StructField> children = new ArrayList<>();
      for (Field child : field.getChildren()) {
        children.add(new StructField(child.getName(), toSpark(child), child.isNullable(), Metadata.empty()));
      }
      return new StructType(children.toArray(new StructField[0]));
    }
    if (type instanceof ArrowType.Map) {
      Field entries = field.getChildren().get(0);
      Field key = entries.getChildren().get(0);
      Field value = entries.getChildren().get(1);
      return DataTypes.createMapType(toSpark(key), toSpark(value), value.isNullable());
    }
    if (type instanceof ArrowType.List
        || type instanceof ArrowType.LargeList
        || type instanceof ArrowType.FixedSizeList) {
      Field element = field.getChildren().get(0);
      return DataTypes.createArrayType(toSpark(element), element.isNullable());
    }
    throw unsupported(field);
  }

  private static DataType integer(ArrowType.Int integer, Field field) {
    int bits = integer.getBitWidth();
    if (integer.getIsSigned()) {
      return switch (bits) {
        case 8 -> DataTypes.ByteType;
        case 16 -> DataTypes.ShortType;
        case 32 -> DataTypes.IntegerType;
        default -> DataTypes.LongType;
      };
    }
    return switch (bits) {
      case 8 -> DataTypes.ShortType;
      case 16 -> DataTypes.IntegerType;
      case 32 -> DataTypes.LongType;
      default -> DataTypes.createDecimalType(20, 0);
    };
  }

  private static UnsupportedOperationException unsupported(Field field) {
    return new UnsupportedOperationException(
        "column " + field.getName() + " of Lance type " + field.getType() + " has no reader in the JVM connector");
  }
}
