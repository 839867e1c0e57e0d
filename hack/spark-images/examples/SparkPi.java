// Part of sparkhooks' stand-in Spark image roots (hack/spark-images): our own Monte-Carlo Pi,
// packaged as org.apache.spark.examples.SparkPi so that SparkApplications written for the stock
// apache/spark images (mainClass org.apache.spark.examples.SparkPi, mainApplicationFile
// local:///opt/spark/examples/jars/spark-examples_<scala>-<version>.jar) run unchanged.
package org.apache.spark.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/**
 * Estimates Pi from random points in the square [-1, 1) x [-1, 1): the share that lands in the
 * unit circle is Pi/4. Each of the {@code args[0]} slices (default 2) is one task that draws
 * {@link #POINTS_PER_SLICE} points with its own seeded generator and returns how many hit.
 * Prints {@code Pi is roughly <estimate>} on standard output.
 */
public final class SparkPi {
  static final int POINTS_PER_SLICE = 100_000;

  private SparkPi() {}

  public static void main(String[] args) {
    int slices = args.length > 0 ? Integer.parseInt(args[0].trim()) : 2;
    if (slices < 1) {
      throw new IllegalArgumentException("the number of slices must be positive, got " + slices);
    }
    SparkSession spark = SparkSession.builder().appName("Spark Pi").getOrCreate();
    try {
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      long seed = System.nanoTime();
      List<Long> seeds = new ArrayList<>(slices);
      for (int i = 0; i < slices; i++) {
        seeds.add(seed + 7919L * i);
      }
      long hits = jsc.parallelize(seeds, slices).map(SparkPi::hitsInCircle).reduce(Long::sum);
      double pi = 4.0 * hits / ((long) POINTS_PER_SLICE * slices);
      System.out.println("Pi is roughly " + pi);
    } finally {
      spark.stop();
    }
  }

  /** Draws POINTS_PER_SLICE points from a generator seeded with seed; returns those inside. */
  static long hitsInCircle(long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    long hits = 0;
    for (int i = 0; i < POINTS_PER_SLICE; i++) {
      double x = random.nextDouble(-1.0, 1.0);
      double y = random.nextDouble(-1.0, 1.0);
      if (x * x + y * y <= 1.0) {
        hits++;
      }
    }
    return hits;
  }
}
