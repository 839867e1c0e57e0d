// Part of sparkhooks' stand-in Spark image roots (hack/spark-images): our own runner of SQL
// statements, as org.apache.spark.examples.sql.JavaSparkSQLCli, which Apache's operator example
// sql.yaml runs with its statements as arguments.
package org.apache.spark.examples.sql;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/**
 * Runs each argument as one SQL statement, in order, and prints the statement then its result as
 * a table with the values in full. A statement that fails ends the application with its error.
 */
public final class JavaSparkSQLCli {
  private JavaSparkSQLCli() {}

  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().appName("JavaSparkSQLCli").getOrCreate();
    try {
      for (String statement : args) {
        System.out.println("> " + statement);
        Dataset<Row> result = spark.sql(statement);
        // show() prints 20 rows by default; a CLI prints them all.
        result.show(Integer.MAX_VALUE, false);
      }
    } finally {
      spark.stop();
    }
  }
}
