package org.dbtlancens.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.expressions.Expression;
import org.apache.spark.sql.connector.expressions.Literal;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.filter.Predicate;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;

/**
 * Spark V2 predicates as Lance SQL, only where Lance gives exactly Spark's answer; anything else
 * returns null and stays with Spark.
 *
 * <p>Exact means: a top-level column compared with a literal of its own kind (a signed integer
 * column with an integer literal, a string column with a string literal, a boolean with a
 * boolean), null tests, IN lists without nulls, and AND, OR and NOT over those. Floats (NaN order
 * and float16, which lance 7's planner refuses against an integer literal), decimals, dates and
 * timestamps (calendar and zone rules), collated strings, unsigned integers and nested fields stay
 * with Spark, as do the smallest 64-bit integer (Lance reads that literal as a float) and a string
 * holding a character beyond U+FFFF or U+0000 (JNI hands it to Rust as invalid UTF-8).
 */
final class FilterTranslator {
  private final Schema schema;

  FilterTranslator(Schema schema) {
    this.schema = schema;
  }

  String translate(Predicate predicate) {
    Expression[] children = predicate.children();
    return switch (predicate.name()) {
      case "AND", "OR" -> binary(predicate.name(), children);
      case "NOT" -> {
        String inner = children[0] instanceof Predicate p ? translate(p) : null;
        yield inner == null ? null : "NOT (" + inner + ")";
      }
      case "IS_NULL", "IS_NOT_NULL" -> {
        String column = column(children[0]);
        yield column == null ? null : column + (predicate.name().equals("IS_NULL") ? " IS NULL" : " IS NOT NULL");
      }
      case "=", "<>", "<", "<=", ">", ">=" -> comparison(predicate.name(), children);
      case "IN" -> in(children);
      default -> null;
    };
  }

  private String binary(String operator, Expression[] children) {
    String left = children[0] instanceof Predicate p ? translate(p) : null;
    String right = children[1] instanceof Predicate q ? translate(q) : null;
    return left == null || right == null ? null : "(" + left + ") " + operator + " (" + right + ")";
  }

  private String comparison(String operator, Expression[] children) {
    if (children[0] instanceof NamedReference && children[1] instanceof Literal<?> literal) {
      return compare(children[0], operator, literal);
    }
    if (children[1] instanceof NamedReference && children[0] instanceof Literal<?> literal) {
      return compare(children[1], mirrored(operator), literal);
    }
    return null;
  }

  private String compare(Expression reference, String operator, Literal<?> literal) {
    String column = column(reference);
    String value = literal(field(reference), literal);
    return column == null || value == null ? null : column + " " + operator + " " + value;
  }

  private static String mirrored(String operator) {
    return switch (operator) {
      case "<" -> ">";
      case "<=" -> ">=";
      case ">" -> "<";
      case ">=" -> "<=";
      default -> operator;
    };
  }

  private String in(Expression[] children) {
    String column = column(children[0]);
    if (column == null) {
      return null;
    }
    List<String> values = new ArrayList<>();
    for (int i = 1; i < children.length; i++) {
      String value = children[i] instanceof Literal<?> literal ? literal(field(children[0]), literal) : null;
      if (value == null) {
        return null;
      }
      values.add(value);
    }
    return values.isEmpty() ? null : column + " IN (" + String.join(", ", values) + ")";
  }

  private Field field(Expression reference) {
    String[] names = ((NamedReference) reference).fieldNames();
    if (names.length != 1) {
      return null;
    }
    for (Field field : schema.getFields()) {
      if (field.getName().equals(names[0])) {
        return field;
      }
    }
    return null;
  }

  private String column(Expression expression) {
    if (!(expression instanceof NamedReference) || field(expression) == null) {
      return null;
    }
    return "`" + field(expression).getName().replace("`", "``") + "`";
  }

  private static String literal(Field field, Literal<?> literal) {
    Object value = literal.value();
    if (field == null || value == null) {
      return null;
    }
    ArrowType type = field.getType();
    DataType kind = literal.dataType();
    if (type instanceof ArrowType.Int integer && integer.getIsSigned() && isInteger(kind)) {
      long number = ((Number) value).longValue();
      return number == Long.MIN_VALUE ? null : Long.toString(number);
    }
    if ((type instanceof ArrowType.Utf8 || type instanceof ArrowType.LargeUtf8)
        && DataTypes.StringType.equals(kind)) {
      String text = value.toString();
      // lance-core takes the filter through JNI as modified UTF-8, which Rust refuses for a
      // character beyond U+FFFF (two surrogates) and for U+0000: such a literal stays with Spark
      if (text.codePoints().anyMatch(point -> point > 0xFFFF || point == 0)) {
        return null;
      }
      return "'" + text.replace("'", "''") + "'";
    }
    if (type instanceof ArrowType.Bool && DataTypes.BooleanType.equals(kind)) {
      return ((Boolean) value) ? "TRUE" : "FALSE";
    }
    return null;
  }

  private static boolean isInteger(DataType kind) {
    return DataTypes.ByteType.equals(kind)
        || DataTypes.ShortType.equals(kind)
        || DataTypes.IntegerType.equals(kind)
        || DataTypes.LongType.equals(kind);
  }
}
