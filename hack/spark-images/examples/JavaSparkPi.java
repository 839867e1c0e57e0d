// Part of sparkhooks' stand-in Spark image roots (hack/spark-images): our own Monte-Carlo Pi with
// one RDD element per point, as org.apache.spark.examples.JavaSparkPi.
package org.apache.spark.examples;

import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/**
 * Estimates Pi like {@link SparkPi}, but distributes the points themselves: an RDD of
 * 100000 * {@code args[0]} (default 2) elements over that many partitions, each element mapped to
 * 1 when a random point lands in the unit circle and to 0 otherwise, then summed.
 * Prints {@code Pi is roughly <estimate>} on standard output.
 */
public final class JavaSparkPi {
  private JavaSparkPi() {}

  public static void main(String[] args) {
    int slices = args.length > 0 ? Integer.parseInt(args[0].trim()) : 2;
    if (slices < 1) {
      throw new IllegalArgumentException("the number of slices must be positive, got " + slices);
    }
    int points = Math.multiplyExact(100_000, slices);
    SparkSession spark = SparkSession.builder().appName("JavaSparkPi").getOrCreate();
    try {
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      JavaRDD<Integer> indices =
          jsc.parallelize(IntStream.range(0, points).boxed().collect(Collectors.toList()), slices);
      int hits =
          indices
              .map(
                  i -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    double x = random.nextDouble(-1.0, 1.0);
                    double y = random.nextDouble(-1.0, 1.0);
                    return x * x + y * y <= 1.0 ? 1 : 0;
                  })
              .reduce(Integer::sum);
      System.out.println("Pi is roughly " + 4.0 * hits / points);
    } finally {
      spark.stop();
    }
  }
}
