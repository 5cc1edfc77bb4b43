"""The Spark engine (`--engine spark`, `pip install scholargraph[spark]`): graph features and batch scoring on
Apache Spark over a Parquet snapshot, written back to Neo4j through the Neo4j Connector for Apache Spark.

session.py starts the SparkSession (jars fetched from Maven once); graph.py holds the DataFrame computations
(networks, PageRank); neo4j_io.py the connector reads and writes; engine.py the partition mapper that batch
scoring runs through; features.py the `features --engine spark` run. See docs/scale-out.md.
"""
