// Part of sparkhooks' stand-in Spark image roots (hack/spark-images): our own program under the
// name Spark's Kubernetes integration tests run (org.apache.spark.examples.SparkRemoteFileTest).
package org.apache.spark.examples;

import java.io.File;
import java.util.List;

import org.apache.spark.SparkFiles;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/**
 * Checks on an executor that {@code args[0]}, a file the application ships (spark.files or
 * spark.archives), was fetched there: prints {@code Mounting of <file> was <true|false>}.
 */
public final class SparkRemoteFileTest {
  private SparkRemoteFileTest() {}

  public static void main(String[] args) {
    if (args.length < 1) {
      System.err.println("Usage: SparkRemoteFileTest <file>");
      System.exit(1);
    }
    String file = args[0];
    SparkSession spark = SparkSession.builder().appName("Test Remote File").getOrCreate();
    try {
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      boolean fetched = jsc.parallelize(List.of(1), 1).map(i -> {
        String path = SparkFiles.get(file);
        System.out.println(file + " is stored at: " + path);
        return new File(path).isFile();
      }).collect().get(0);
      System.out.println("Mounting of " + file + " was " + fetched);
    } finally {
      spark.stop();
    }
  }
}
