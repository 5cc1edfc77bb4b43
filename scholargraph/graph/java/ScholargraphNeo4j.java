// Embedded Neo4j with Bolt on 127.0.0.1: the managed local server of scholargraph.
//
// Usage: java -cp <jars> ScholargraphNeo4j <home-dir> <port>
// Environment: SCHOLARGRAPH_NEO4J_PASSWORD (optional; turns authentication on; never logged),
//              SCHOLARGRAPH_NEO4J_PAGECACHE (e.g. "512m").
// Writes <home>/run/ready once Bolt accepts connections; removes it on shutdown.
// SIGTERM (or Ctrl-C) runs the shutdown hook, which shuts the DBMS down cleanly.

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;
import org.neo4j.kernel.internal.Version;

public final class ScholargraphNeo4j {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ScholargraphNeo4j <home-dir> <port>");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        String password = System.getenv("SCHOLARGRAPH_NEO4J_PASSWORD");
        boolean auth = password != null && !password.isEmpty();
        String pagecache = System.getenv().getOrDefault("SCHOLARGRAPH_NEO4J_PAGECACHE", "512m");
        Path run = home.resolve("run");
        Files.createDirectories(run);
        Path ready = run.resolve("ready");
        Files.deleteIfExists(ready);

        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home.resolve("neo4j"))
                // Embedded mode leaves Bolt off unless enabled explicitly.
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.parse(pagecache))
                .setConfig(GraphDatabaseSettings.plugin_dir, home.resolve("plugins"))
                .setConfig(GraphDatabaseSettings.procedure_unrestricted, List.of("apoc.*", "gds.*"))
                .setConfig(GraphDatabaseSettings.logs_directory, home.resolve("logs"))
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ZERO);
        DatabaseManagementService dbms = builder.build();

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.out.println("scholargraph-neo4j: shutting down");
            try {
                Files.deleteIfExists(ready);
            } catch (Exception ignored) {
                // the ready file is advisory; the pid check is authoritative
            }
            dbms.shutdown();
            System.out.println("scholargraph-neo4j: stopped cleanly");
            stopped.countDown();
        }, "scholargraph-shutdown"));

        if (auth) {
            // The default user 'neo4j' starts with password 'neo4j' and a forced change; set ours.
            // Parameters keep the password out of query logs.
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PLAINTEXT PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        }
        // Touch the default database so a store left by a kill -9 is recovered before we say ready.
        dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");

        Files.writeString(ready, Version.getNeo4jVersion() + "\n", StandardCharsets.UTF_8);
        System.out.println("scholargraph-neo4j: Neo4j " + Version.getNeo4jVersion()
                + " ready, bolt://127.0.0.1:" + port + (auth ? " (auth on)" : " (auth off)"));
        stopped.await();
    }
}
