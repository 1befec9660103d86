package org.dbtlancens.spark;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampMicroTZVector;
import org.apache.arrow.vector.TimeStampMicroVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VariableWidthFieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.DateUnit;
import org.apache.arrow.vector.types.FloatingPointPrecision;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecializedGetters;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.types.TimestampNTZType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Copies Spark's rows into Arrow vectors of the table's own Lance schema, value by value.
 *
 * <p>Spark's own Arrow writer only knows the Arrow types Spark itself produces; a Lance table holds
 * more (fixed-size lists for vectors, large strings), and its schema, not Spark's, decides what is
 * stored. So each column is written straight into a vector of the target type. Pairs this class
 * cannot write exactly as the Python writer would are named by {@link #unsupported}, and the
 * adapter writes that table from Python instead. A NULL where the table's field is not nullable
 * fails the write naming the column, before Lance sees it.
 */
final class ArrowRowWriter {
  private final List<ValueWriter> columns;

  private ArrowRowWriter(List<ValueWriter> columns) {
    this.columns = columns;
  }

  /** Writers for every column of {@code root} (allocated), fed from rows of {@code spark}. */
  static ArrowRowWriter forRoot(VectorSchemaRoot root, StructType spark) {
    List<ValueWriter> columns = new ArrayList<>();
    StructField[] fields = spark.fields();
    for (int i = 0; i < fields.length; i++) {
      columns.add(writer(root.getVector(i), fields[i].dataType(), root.getVector(i).getName()));
    }
    return new ArrowRowWriter(columns);
  }

  /** Writes {@code row} at {@code index} of every column. */
  void write(InternalRow row, int index) {
    for (int i = 0; i < columns.size(); i++) {
      columns.get(i).write(row, i, index);
    }
  }

  /**
   * Why rows of {@code spark} cannot be written into {@code target} by this class (the first column
   * that cannot), or null when they can. The columns pair up by position.
   */
  static String unsupported(StructType spark, Schema target) {
    StructField[] fields = spark.fields();
    List<Field> wanted = target.getFields();
    if (fields.length != wanted.size()) {
      return "the data has " + fields.length + " columns, the table's schema " + wanted.size();
    }
    for (int i = 0; i < fields.length; i++) {
      String reason = unsupported(fields[i].dataType(), wanted.get(i), wanted.get(i).getName());
      if (reason != null) {
        return reason;
      }
    }
    return null;
  }

  private static String unsupported(DataType spark, Field field, String path) {
    ArrowType type = field.getType();
    String refusal = "column " + path + ": Spark's " + spark.simpleString() + " into Lance's " + type;
    if (type instanceof ArrowType.Int integer) {
      boolean same = integer.getIsSigned()
          && ((integer.getBitWidth() == 8 && spark instanceof ByteType)
              || (integer.getBitWidth() == 16 && spark instanceof ShortType)
              || (integer.getBitWidth() == 32 && spark instanceof IntegerType)
              || (integer.getBitWidth() == 64 && spark instanceof LongType));
      return same ? null : refusal;
    }
    if (type instanceof ArrowType.FloatingPoint floating) {
      FloatingPointPrecision precision = floating.getPrecision();
      boolean same = (precision == FloatingPointPrecision.SINGLE && spark instanceof FloatType)
          || (precision == FloatingPointPrecision.DOUBLE && spark instanceof DoubleType);
      return same ? null : refusal;
    }
    if (type instanceof ArrowType.Bool) {
      return spark instanceof BooleanType ? null : refusal;
    }
    if (type instanceof ArrowType.Utf8 || type instanceof ArrowType.LargeUtf8) {
      return spark instanceof StringType ? null : refusal;
    }
    if (type instanceof ArrowType.Binary || type instanceof ArrowType.LargeBinary) {
      return spark instanceof BinaryType ? null : refusal;
    }
    if (type instanceof ArrowType.Date date) {
      return date.getUnit() == DateUnit.DAY && spark instanceof DateType ? null : refusal;
    }
    if (type instanceof ArrowType.Timestamp stamp) {
      if (stamp.getUnit() != TimeUnit.MICROSECOND) {
        return refusal;
      }
      boolean zoned = stamp.getTimezone() != null;
      return (zoned && spark instanceof TimestampType) || (!zoned && spark instanceof TimestampNTZType)
          ? null
          : refusal;
    }
    if (type instanceof ArrowType.Decimal decimal) {
      return spark instanceof DecimalType d
              && decimal.getBitWidth() == 128
              && d.precision() == decimal.getPrecision()
              && d.scale() == decimal.getScale()
          ? null
          : refusal;
    }
    if (type instanceof ArrowType.Struct) {
      if (!(spark instanceof StructType struct)) {
        return refusal;
      }
      StructField[] inner = struct.fields();
      List<Field> children = field.getChildren();
      if (inner.length != children.size()) {
        return refusal;
      }
      for (int i = 0; i < inner.length; i++) {
        if (!inner[i].name().equals(children.get(i).getName())) {
          return refusal + " (field " + inner[i].name() + " vs " + children.get(i).getName() + ")";
        }
        String reason = unsupported(inner[i].dataType(), children.get(i), path + "." + inner[i].name());
        if (reason != null) {
          return reason;
        }
      }
      return null;
    }
    if (type instanceof ArrowType.List
        || type instanceof ArrowType.LargeList
        || type instanceof ArrowType.FixedSizeList) {
      if (!(spark instanceof ArrayType array)) {
        return refusal;
      }
      return unsupported(array.elementType(), field.getChildren().get(0), path + "[]");
    }
    return refusal;
  }

  private static ValueWriter writer(FieldVector vector, DataType spark, String path) {
    boolean nullable = vector.getField().isNullable();
    if (vector instanceof BitVector v) {
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getBoolean(ordinal) ? 1 : 0);
        }
      };
    }
    if (vector instanceof TinyIntVector v) {
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getByte(ordinal));
        }
      };
    }
    if (vector instanceof SmallIntVector v) {
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getShort(ordinal));
        }
      };
    }
    if (vector instanceof IntVector v) {
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getInt(ordinal));
        }
      };
    }
    if (vector instanceof BigIntVector v) {
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getLong(ordinal));
        }
      };
    }
    if (vector instanceof Float4Vector v) {
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getFloat(ordinal));
        }
      };
    }
    if (vector instanceof Float8Vector v) {
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getDouble(ordinal));
        }
      };
    }
    if (vector instanceof DateDayVector v) {
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getInt(ordinal));
        }
      };
    }
    if (vector instanceof TimeStampMicroTZVector v) {
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getLong(ordinal));
        }
      };
    }
    if (vector instanceof TimeStampMicroVector v) {
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getLong(ordinal));
        }
      };
    }
    if (vector instanceof DecimalVector v) {
      DecimalType type = (DecimalType) spark;
      int precision = type.precision();
      int scale = type.scale();
      boolean compact = precision <= 18; // the unscaled value fits a long
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          org.apache.spark.sql.types.Decimal value = src.getDecimal(ordinal, precision, scale);
          if (compact) {
            v.setSafe(index, value.toUnscaledLong());
          } else {
            v.setSafe(index, value.toJavaBigDecimal());
          }
        }
      };
    }
    // string and large string (32- or 64-bit offsets) share one writer, as binary and large binary do
    if (vector instanceof VarCharVector || vector instanceof LargeVarCharVector) {
      VariableWidthFieldVector v = (VariableWidthFieldVector) vector;
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          UTF8String value = src.getUTF8String(ordinal);
          if (value.getBaseObject() instanceof byte[]) {
            ByteBuffer buffer = value.getByteBuffer();
            v.setSafe(index, buffer, buffer.position(), value.numBytes());
          } else {
            v.setSafe(index, value.getBytes());
          }
        }
      };
    }
    if (vector instanceof VarBinaryVector || vector instanceof LargeVarBinaryVector) {
      VariableWidthFieldVector v = (VariableWidthFieldVector) vector;
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          v.setSafe(index, src.getBinary(ordinal));
        }
      };
    }
    if (vector instanceof StructVector v) {
      StructField[] fields = ((StructType) spark).fields();
      List<ValueWriter> children = new ArrayList<>();
      for (int i = 0; i < fields.length; i++) {
        FieldVector child = (FieldVector) v.getChildByOrdinal(i);
        children.add(writer(child, fields[i].dataType(), path + "." + fields[i].name()));
      }
      int width = fields.length;
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          InternalRow value = src.getStruct(ordinal, width);
          v.setIndexDefined(index);
          for (int i = 0; i < width; i++) {
            children.get(i).write(value, i, index);
          }
        }
      };
    }
    DataType element = spark instanceof ArrayType array ? array.elementType() : null;
    if (vector instanceof ListVector v) {
      ValueWriter child = writer(v.getDataVector(), element, path + "[]");
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          ArrayData value = src.getArray(ordinal);
          int start = v.startNewValue(index);
          int length = value.numElements();
          for (int i = 0; i < length; i++) {
            child.write(value, i, start + i);
          }
          v.endValue(index, length);
        }
      };
    }
    if (vector instanceof LargeListVector v) {
      ValueWriter child = writer(v.getDataVector(), element, path + "[]");
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          ArrayData value = src.getArray(ordinal);
          long start = v.startNewValue(index);
          int length = value.numElements();
          for (int i = 0; i < length; i++) {
            child.write(value, i, Math.toIntExact(start + i));
          }
          v.endValue(index, length);
        }
      };
    }
    if (vector instanceof FixedSizeListVector v) {
      ValueWriter child = writer(v.getDataVector(), element, path + "[]");
      int size = v.getListSize();
      return new ValueWriter(path, nullable, v::setNull) {
        @Override
        void set(SpecializedGetters src, int ordinal, int index) {
          ArrayData value = src.getArray(ordinal);
          if (value.numElements() != size) {
            throw new IllegalArgumentException(
                "column "
                    + path
                    + " is a vector of "
                    + size
                    + " values in the Lance table, but a row has "
                    + value.numElements());
          }
          int start = v.startNewValue(index);
          for (int i = 0; i < size; i++) {
            child.write(value, i, start + i);
          }
        }
      };
    }
    throw new IllegalArgumentException(
        "column " + path + ": no JVM writer for Lance type " + vector.getField().getType());
  }

  /** One column (or nested value) of the target: a value or a NULL at a row index. */
  private abstract static class ValueWriter {
    private final String path;
    private final boolean nullable;
    private final java.util.function.IntConsumer nulls;

    ValueWriter(String path, boolean nullable, java.util.function.IntConsumer nulls) {
      this.path = path;
      this.nullable = nullable;
      this.nulls = nulls;
    }

    final void write(SpecializedGetters src, int ordinal, int index) {
      if (src.isNullAt(ordinal)) {
        if (!nullable) {
          throw new IllegalArgumentException(
              "column " + path + " is NOT NULL in the Lance table's schema, but a row has NULL there");
        }
        nulls.accept(index);
      } else {
        set(src, ordinal, index);
      }
    }

    abstract void set(SpecializedGetters src, int ordinal, int index);
  }
}
