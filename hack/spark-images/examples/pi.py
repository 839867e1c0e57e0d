# Part of sparkhooks' stand-in Spark image roots (hack/spark-images): our own PySpark Monte-Carlo
# Pi, installed as /opt/spark/examples/src/main/python/pi.py.
#
#   spark-submit pi.py [partitions]     (default 2 partitions of 100000 points each)
#
# Prints "Pi is roughly <estimate>" on standard output.
import random
import sys

from pyspark.sql import SparkSession

POINTS_PER_PARTITION = 100000


def hits_in_circle(index, _rows):
    """Throws POINTS_PER_PARTITION points into [-1, 1)^2; yields how many land in the unit circle."""
    rng = random.Random((index + 1) * 104729 ^ random.getrandbits(32))
    hits = 0
    for _ in range(POINTS_PER_PARTITION):
        x = rng.uniform(-1.0, 1.0)
        y = rng.uniform(-1.0, 1.0)
        if x * x + y * y <= 1.0:
            hits += 1
    yield hits


def main(argv):
    partitions = int(argv[1]) if len(argv) > 1 else 2
    if partitions < 1:
        raise SystemExit("the number of partitions must be positive, got %d" % partitions)
    spark = SparkSession.builder.appName("PythonPi").getOrCreate()
    try:
        rdd = spark.sparkContext.parallelize(range(partitions), partitions)
        hits = rdd.mapPartitionsWithIndex(hits_in_circle).sum()
        print("Pi is roughly %f" % (4.0 * hits / (POINTS_PER_PARTITION * partitions)))
    finally:
        spark.stop()


if __name__ == "__main__":
    main(sys.argv)
