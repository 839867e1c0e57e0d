// Part of sparkhooks' stand-in Spark image roots (hack/spark-images): a job of several stages,
// as org.apache.spark.examples.GroupByTest of the stock image takes its arguments.
package org.apache.spark.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * Makes {@code NUM_MAPPERS} partitions of {@code NUM_KVPAIRS} random keys each with a value of
 * {@code VALUE_SIZE} random bytes, counts them (job 0: one stage), then groups them by key into
 * {@code NUM_REDUCERS} partitions and counts the keys (job 1: a shuffle map stage and a reduce
 * stage). Arguments: NUM_MAPPERS NUM_KVPAIRS VALUE_SIZE NUM_REDUCERS (defaults 2 1000 1000 the
 * mappers). Prints {@code Keys after grouping: <count>}.
 */
public final class GroupByTest {
  private GroupByTest() {}

  public static void main(String[] args) {
    int mappers = argument(args, 0, 2);
    int pairs = argument(args, 1, 1000);
    int valueSize = argument(args, 2, 1000);
    int reducers = argument(args, 3, mappers);
    SparkSession spark = SparkSession.builder().appName("GroupBy Test").getOrCreate();
    try {
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      JavaPairRDD<Integer, byte[]> data =
          jsc.parallelize(IntStream.range(0, mappers).boxed().collect(Collectors.toList()), mappers)
              .flatMapToPair(
                  mapper -> {
                    ThreadLocalRandom random = ThreadLocalRandom.current();
                    List<Tuple2<Integer, byte[]>> out = new ArrayList<>(pairs);
                    for (int i = 0; i < pairs; i++) {
                      byte[] value = new byte[valueSize];
                      random.nextBytes(value);
                      out.add(new Tuple2<>(random.nextInt(Integer.MAX_VALUE), value));
                    }
                    return out.iterator();
                  })
              .cache();
      data.count();
      System.out.println("Keys after grouping: " + data.groupByKey(reducers).count());
    } finally {
      spark.stop();
    }
  }

  private static int argument(String[] args, int index, int fallback) {
    if (args.length <= index) {
      return fallback;
    }
    int value = Integer.parseInt(args[index].trim());
    if (value < 1) {
      throw new IllegalArgumentException("argument " + (index + 1) + " must be positive, got " + value);
    }
    return value;
  }
}
