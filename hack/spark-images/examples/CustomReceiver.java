// Part of sparkhooks' stand-in Spark image roots (hack/spark-images): our own streaming word
// count over a receiver of our own, packaged as org.apache.spark.examples.streaming.CustomReceiver,
// the class Apache's operator e2e suite (spark-versions) runs from the examples jar.
package org.apache.spark.examples.streaming;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import org.apache.spark.SparkConf;
import org.apache.spark.storage.StorageLevel;
import org.apache.spark.streaming.Durations;
import org.apache.spark.streaming.api.java.JavaStreamingContext;
import org.apache.spark.streaming.receiver.Receiver;
import scala.Tuple2;

/**
 * Counts the words of the lines a text server at {@code args[0]}:{@code args[1]} sends, every
 * second. The receiver runs in an executor and connects again whenever the server is not there or
 * hangs up, so the application runs until it is stopped, with or without a server.
 */
// DStreams are deprecated in Spark 4; Apache's suite still runs this one.
@SuppressWarnings("deprecation")
public final class CustomReceiver extends Receiver<String> {
  private final String host;
  private final int port;

  CustomReceiver(String host, int port) {
    super(StorageLevel.MEMORY_AND_DISK_2());
    this.host = host;
    this.port = port;
  }

  public static void main(String[] args) throws InterruptedException {
    if (args.length < 2) {
      System.err.println("usage: CustomReceiver <host> <port>");
      System.exit(1);
    }
    SparkConf conf = new SparkConf().setAppName("CustomReceiver");
    JavaStreamingContext ssc = new JavaStreamingContext(conf, Durations.seconds(1));
    ssc.receiverStream(new CustomReceiver(args[0], Integer.parseInt(args[1].trim())))
        .flatMap(line -> Arrays.asList(line.split(" ")).iterator())
        .mapToPair(word -> new Tuple2<>(word, 1))
        .reduceByKey(Integer::sum)
        .print();
    ssc.start();
    ssc.awaitTermination();
  }

  @Override
  public void onStart() {
    Thread reader = new Thread(this::receive, "CustomReceiver " + host + ":" + port);
    reader.setDaemon(true);
    reader.start();
  }

  @Override
  public void onStop() {
    // The reader sees isStopped() and ends; its socket closes with it.
  }

  private void receive() {
    try (Socket socket = new Socket(host, port);
        BufferedReader in =
            new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while (!isStopped() && (line = in.readLine()) != null) {
        store(line);
      }
      restart("the server at " + host + ":" + port + " hung up; connecting again");
    } catch (IOException e) {
      restart("cannot read from " + host + ":" + port + "; connecting again", e);
    }
  }
}
