// Part of sparkhooks' stand-in Spark image roots (hack/spark-images): our own word count of a
// text file, as org.apache.spark.examples.JavaWordCount, which Apache's operator example
// word-count.yaml runs on /opt/spark/RELEASE.
package org.apache.spark.examples;

import java.util.Arrays;
import java.util.List;

import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * Counts the words, separated by single spaces, of the text file {@code args[0]} (any path Spark
 * reads: a local file must be in the driver's and the executors' images alike). Prints one line
 * {@code <word>: <count>} per distinct word, in the order the counts come back.
 */
public final class JavaWordCount {
  private JavaWordCount() {}

  public static void main(String[] args) {
    if (args.length < 1) {
      System.err.println("usage: JavaWordCount <file>");
      System.exit(1);
    }
    SparkSession spark = SparkSession.builder().appName("JavaWordCount").getOrCreate();
    try {
      JavaPairRDD<String, Integer> counts =
          spark.read().textFile(args[0]).javaRDD()
              .flatMap(line -> Arrays.asList(line.split(" ")).iterator())
              .mapToPair(word -> new Tuple2<>(word, 1))
              .reduceByKey(Integer::sum);
      List<Tuple2<String, Integer>> result = counts.collect();
      for (Tuple2<String, Integer> wordCount : result) {
        System.out.println(wordCount._1() + ": " + wordCount._2());
      }
    } finally {
      spark.stop();
    }
  }
}
