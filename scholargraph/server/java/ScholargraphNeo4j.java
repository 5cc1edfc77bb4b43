// Embedded Neo4j with Bolt (and HTTP: the Neo4j Browser and the HTTP API) on 127.0.0.1:
// the managed local server of scholargraph.
//
// Usage: java -cp <jars> ScholargraphNeo4j <home-dir> <bolt-port> [<http-port>]
//        An HTTP port of 0 (or none) leaves the HTTP connector off. The Browser is served from the
//        neo4j-browser jar on the classpath.
// Environment: SCHOLARGRAPH_NEO4J_PASSWORD (turns authentication on, for Bolt and HTTP alike; the CLI passes
//              the password file's or the user's; absent only with --no-auth; never logged),
//              SCHOLARGRAPH_NEO4J_PAGECACHE (e.g. "512m"),
//              SCHOLARGRAPH_NEO4J_BROWSER_GUIDE (optional; the URL of a Browser guide played on connect).
// Writes <home>/run/ready once Bolt accepts connections; removes it on shutdown.
// SIGTERM (or Ctrl-C) runs the shutdown hook, which shuts the DBMS down cleanly.

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.graphdb.QueryExecutionException;
import org.neo4j.io.ByteUnit;
import org.neo4j.kernel.internal.Version;
import org.neo4j.server.configuration.ServerSettings;

public final class ScholargraphNeo4j {
    public static void main(String[] args) throws Exception {
        if (args.length != 2 && args.length != 3) {
            System.err.println("usage: ScholargraphNeo4j <home-dir> <bolt-port> [<http-port>]");
            System.exit(2);
        }
        Path home = Path.of(args[0]).toAbsolutePath();
        int port = Integer.parseInt(args[1]);
        int httpPort = args.length == 3 ? Integer.parseInt(args[2]) : 0;
        boolean http = httpPort > 0;
        String guide = System.getenv().getOrDefault("SCHOLARGRAPH_NEO4J_BROWSER_GUIDE", "");
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
                .setConfig(HttpConnector.enabled, http)
                .setConfig(GraphDatabaseSettings.auth_enabled, auth)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.parse(pagecache))
                .setConfig(GraphDatabaseSettings.plugin_dir, home.resolve("plugins"))
                .setConfig(GraphDatabaseSettings.procedure_unrestricted, List.of("apoc.*", "gds.*"))
                .setConfig(GraphDatabaseSettings.logs_directory, home.resolve("logs"))
                .setConfig(GraphDatabaseSettings.transaction_timeout, Duration.ZERO)
                // Bolt's event loops close after the databases have shut down, each waiting a quiet period for
                // work that can no longer come (5 s by default, twice: a stop took 10 s more than it needed).
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0);
        if (http) {
            // Loopback only, like Bolt. With auth on, the HTTP API asks for basic auth; the Browser's
            // static files do not (they hold no data), and the Browser itself logs in over Bolt.
            builder.setConfig(HttpConnector.listen_address, new SocketAddress("127.0.0.1", httpPort))
                    .setConfig(HttpConnector.advertised_address, new SocketAddress("127.0.0.1", httpPort))
                    // Guides may be fetched from this server under either loopback name.
                    .setConfig(ServerSettings.browser_remote_content_hostname_whitelist,
                            "guides.neo4j.com,localhost,127.0.0.1")
                    // Not Neo4j's default "*": other web pages the user visits may not send Cypher here.
                    .setConfig(ServerSettings.http_access_control_allow_origin,
                            "http://127.0.0.1:" + httpPort);
            if (!guide.isEmpty()) {
                builder.setConfig(ServerSettings.browser_post_connect_cmd, "play " + guide);
            }
        }
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

        try {
            if (auth) {
                setPassword(dbms, password);
            }
            // Touch the default database so a store left by a kill -9 is recovered before we say ready.
            dbms.database(GraphDatabaseSettings.DEFAULT_DATABASE_NAME).executeTransactionally("RETURN 1");
        } catch (RuntimeException e) {
            // The DBMS's own threads would keep the JVM alive after main throws: a start that failed must end.
            System.out.println("scholargraph-neo4j: ERROR during start-up: " + e.getMessage());
            System.exit(1);
        }

        Files.writeString(ready, Version.getNeo4jVersion() + "\n", StandardCharsets.UTF_8);
        System.out.println("scholargraph-neo4j: Neo4j " + Version.getNeo4jVersion()
                + " ready, bolt://127.0.0.1:" + port
                + (http ? ", Browser http://127.0.0.1:" + httpPort + "/browser/" : ", HTTP off")
                + (auth ? " (auth on)" : " (auth off)"));
        stopped.await();
    }

    // The default user 'neo4j' starts with password 'neo4j' and a forced change; set ours on every start
    // (the password file or SCHOLARGRAPH_NEO4J_PASSWORD is the source of truth). Neo4j refuses to "change"
    // a password to the one it already has: that is a restart with the same password, and nothing to do.
    // Parameters keep the password out of query logs.
    private static void setPassword(DatabaseManagementService dbms, String password) {
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PLAINTEXT PASSWORD $pw CHANGE NOT REQUIRED", Map.of("pw", password));
        } catch (QueryExecutionException e) {
            if (e.getMessage() == null || !e.getMessage().contains("Old password and new password cannot be the same")) {
                throw e;
            }
        }
    }
}
