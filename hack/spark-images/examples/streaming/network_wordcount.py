# Part of sparkhooks' stand-in Spark image roots (hack/spark-images): our own PySpark streaming word
# count, installed as /opt/spark/examples/src/main/python/streaming/network_wordcount.py, the file
# Apache's operator e2e suite (python) runs.
#
#   spark-submit network_wordcount.py <host> <port>
#
# Counts the words of the lines a text server at host:port sends, every second; the socket
# receiver connects again whenever the server is not there, so it runs until it is stopped.
import sys

from pyspark import SparkContext
from pyspark.streaming import StreamingContext


def main(host, port):
    sc = SparkContext(appName="PythonStreamingNetworkWordCount")
    ssc = StreamingContext(sc, 1)
    words = ssc.socketTextStream(host, port).flatMap(lambda line: line.split(" "))
    words.map(lambda word: (word, 1)).reduceByKey(lambda a, b: a + b).pprint()
    ssc.start()
    ssc.awaitTermination()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: network_wordcount.py <host> <port>", file=sys.stderr)
        sys.exit(1)
    main(sys.argv[1], int(sys.argv[2]))
