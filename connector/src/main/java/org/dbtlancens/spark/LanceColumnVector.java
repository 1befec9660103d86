package org.dbtlancens.spark;

import java.math.BigDecimal;
import java.math.BigInteger;
import org.apache.arrow.memory.util.Float16;
import org.apache.arrow.vector.BaseLargeVariableWidthVector;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DateMilliVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FixedSizeBinaryVector;
import org.apache.arrow.vector.Float2Vector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.LargeVarBinaryVector;
import org.apache.arrow.vector.LargeVarCharVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.UInt1Vector;
import org.apache.arrow.vector.UInt2Vector;
import org.apache.arrow.vector.UInt4Vector;
import org.apache.arrow.vector.UInt8Vector;
import org.apache.arrow.vector.ValueVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.FixedSizeListVector;
import org.apache.arrow.vector.complex.LargeListVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarArray;
import org.apache.spark.sql.vectorized.ColumnarMap;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * One Arrow vector of a Lance scan as a Spark column vector, in the Spark type
 * {@link SchemaMapping} gives it.
 *
 * <p>Spark's own {@code ArrowColumnVector} refuses fixed-size lists (Lance's vectors), unsigned
 * integers and float16, so this class reads every Arrow layout Lance returns itself: unsigned
 * integers widen (uint64 to decimal(20,0)), float16 widens to float, timestamps of every unit
 * become microseconds, strings are read in place (no copy).
 */
final class LanceColumnVector extends ColumnVector {
  private static final long MICROS_PER_DAY_MILLIS = 86_400_000L;

  private final ValueVector vector;
  private final LanceColumnVector[] children;

  LanceColumnVector(ValueVector vector, DataType sparkType) {
    super(sparkType);
    this.vector = vector;
    this.children = childrenOf(vector, sparkType);
  }

  private static LanceColumnVector[] childrenOf(ValueVector vector, DataType sparkType) {
    if (vector instanceof MapVector map) {
      org.apache.spark.sql.types.MapType type = (org.apache.spark.sql.types.MapType) sparkType;
      StructVector entries = (StructVector) map.getDataVector();
      return new LanceColumnVector[] {
        new LanceColumnVector(entries.getChildByOrdinal(0), type.keyType()),
        new LanceColumnVector(entries.getChildByOrdinal(1), type.valueType())
      };
    }
    if (vector instanceof ListVector list) {
      return element(list.getDataVector(), sparkType);
    }
    if (vector instanceof LargeListVector list) {
      return element(list.getDataVector(), sparkType);
    }
    if (vector instanceof FixedSizeListVector list) {
      return element(list.getDataVector(), sparkType);
    }
    if (vector instanceof StructVector struct) {
      org.apache.spark.sql.types.StructType type = (org.apache.spark.sql.types.StructType) sparkType;
      LanceColumnVector[] fields = new LanceColumnVector[type.fields().length];
      for (int i = 0; i < fields.length; i++) {
        fields[i] = new LanceColumnVector(struct.getChildByOrdinal(i), type.fields()[i].dataType());
      }
      return fields;
    }
    return new LanceColumnVector[0];
  }

  private static LanceColumnVector[] element(ValueVector data, DataType sparkType) {
    DataType elementType = ((org.apache.spark.sql.types.ArrayType) sparkType).elementType();
    return new LanceColumnVector[] {new LanceColumnVector(data, elementType)};
  }

  @Override
  public void close() {
    for (LanceColumnVector child : children) {
      child.close();
    }
  }

  @Override
  public boolean hasNull() {
    return vector.getNullCount() > 0;
  }

  @Override
  public int numNulls() {
    return vector.getNullCount();
  }

  @Override
  public boolean isNullAt(int rowId) {
    return vector.isNull(rowId);
  }

  @Override
  public boolean getBoolean(int rowId) {
    return ((BitVector) vector).get(rowId) == 1;
  }

  @Override
  public byte getByte(int rowId) {
    return ((TinyIntVector) vector).get(rowId);
  }

  @Override
  public short getShort(int rowId) {
    if (vector instanceof UInt1Vector unsigned) {
      return (short) (unsigned.get(rowId) & 0xFF);
    }
    return ((SmallIntVector) vector).get(rowId);
  }

  @Override
  public int getInt(int rowId) {
    if (vector instanceof UInt2Vector unsigned) {
      return unsigned.get(rowId);
    }
    if (vector instanceof DateDayVector days) {
      return days.get(rowId);
    }
    if (vector instanceof DateMilliVector millis) {
      return (int) Math.floorDiv(millis.get(rowId), MICROS_PER_DAY_MILLIS);
    }
    return ((IntVector) vector).get(rowId);
  }

  @Override
  public long getLong(int rowId) {
    if (vector instanceof UInt4Vector unsigned) {
      return Integer.toUnsignedLong(unsigned.get(rowId));
    }
    if (vector instanceof TimeStampVector timestamp) {
      return micros(timestamp, rowId);
    }
    if (vector instanceof UInt8Vector unsigned) {
      return unsigned.get(rowId); // the row address: below 2^63 (fragment id << 32 | offset)
    }
    return ((BigIntVector) vector).get(rowId);
  }

  private static long micros(TimeStampVector timestamp, int rowId) {
    long value = timestamp.get(rowId);
    TimeUnit unit = ((ArrowType.Timestamp) timestamp.getField().getType()).getUnit();
    return switch (unit) {
      case SECOND -> Math.multiplyExact(value, 1_000_000L);
      case MILLISECOND -> Math.multiplyExact(value, 1_000L);
      case MICROSECOND -> value;
      case NANOSECOND -> Math.floorDiv(value, 1_000L);
    };
  }

  @Override
  public float getFloat(int rowId) {
    if (vector instanceof Float2Vector half) {
      return Float16.toFloat(half.get(rowId));
    }
    return ((Float4Vector) vector).get(rowId);
  }

  @Override
  public double getDouble(int rowId) {
    return ((Float8Vector) vector).get(rowId);
  }

  @Override
  public Decimal getDecimal(int rowId, int precision, int scale) {
    if (isNullAt(rowId)) {
      return null;
    }
    if (vector instanceof UInt8Vector unsigned) {
      BigInteger value = new BigInteger(Long.toUnsignedString(unsigned.get(rowId)));
      return Decimal.apply(new BigDecimal(value), precision, scale);
    }
    return Decimal.apply(((DecimalVector) vector).getObject(rowId), precision, scale);
  }

  @Override
  public UTF8String getUTF8String(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    if (vector instanceof VarCharVector text) {
      long start = text.getStartOffset(rowId);
      int length = text.getEndOffset(rowId) - (int) start;
      return UTF8String.fromAddress(null, text.getDataBuffer().memoryAddress() + start, length);
    }
    LargeVarCharVector text = (LargeVarCharVector) vector;
    long start = text.getOffsetBuffer().getLong((long) rowId * BaseLargeVariableWidthVector.OFFSET_WIDTH);
    long end = text.getOffsetBuffer().getLong((long) (rowId + 1) * BaseLargeVariableWidthVector.OFFSET_WIDTH);
    return UTF8String.fromAddress(null, text.getDataBuffer().memoryAddress() + start, (int) (end - start));
  }

  @Override
  public byte[] getBinary(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    if (vector instanceof VarBinaryVector binary) {
      return binary.get(rowId);
    }
    if (vector instanceof LargeVarBinaryVector binary) {
      return binary.get(rowId);
    }
    if (vector instanceof FixedSizeBinaryVector binary) {
      return binary.get(rowId);
    }
    if (vector instanceof BaseVariableWidthVector variable) {
      return variable.get(rowId);
    }
    return ((BaseLargeVariableWidthVector) vector).get(rowId);
  }

  @Override
  public ColumnarArray getArray(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    if (vector instanceof ListVector list) {
      int start = list.getElementStartIndex(rowId);
      return new ColumnarArray(children[0], start, list.getElementEndIndex(rowId) - start);
    }
    if (vector instanceof LargeListVector list) {
      long start = list.getElementStartIndex(rowId);
      return new ColumnarArray(children[0], (int) start, (int) (list.getElementEndIndex(rowId) - start));
    }
    FixedSizeListVector list = (FixedSizeListVector) vector;
    int size = list.getListSize();
    return new ColumnarArray(children[0], rowId * size, size);
  }

  @Override
  public ColumnarMap getMap(int rowId) {
    if (isNullAt(rowId)) {
      return null;
    }
    MapVector map = (MapVector) vector;
    int start = map.getElementStartIndex(rowId);
    return new ColumnarMap(children[0], children[1], start, map.getElementEndIndex(rowId) - start);
  }

  @Override
  public ColumnVector getChild(int ordinal) {
    return children[ordinal];
  }
}
