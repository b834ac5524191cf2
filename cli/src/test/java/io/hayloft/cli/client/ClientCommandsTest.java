package io.hayloft.cli.client;

import static org.assertj.core.api.Assertions.assertThat;

import io.hayloft.cli.Hayloft;
import io.hayloft.cli.cluster.ClusterOptions;
import io.hayloft.cli.cluster.EmbeddedCluster;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code hayloft put/get/rm/stat/volumes/stores} against an embedded cluster: output and exit codes. */
class ClientCommandsTest {
    @TempDir
    static Path dir;

    private static EmbeddedCluster cluster;

    @BeforeAll
    static void start() throws Exception {
        cluster = EmbeddedCluster.start(ClusterOptions.of(dir.resolve("cluster")).withStores(3, 2).withFsync(false)
                .withTiming(200, 60_000, 3));
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    private record Run(int exit, String out, String err) {
    }

    private Run run(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Hayloft.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        String[] all = new String[args.length + 1];
        all[0] = args[0];
        all[1] = "--directory=" + cluster.directoryAddress();
        System.arraycopy(args, 1, all, 2, args.length - 1);
        int exit = cl.execute(all);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void putGetStatRmRoundTrip() throws Exception {
        byte[] a = new byte[70_000];
        new Random(3).nextBytes(a);
        Path fa = Files.write(dir.resolve("a.jpg"), a);
        Path fb = Files.writeString(dir.resolve("b.txt"), "hello hayloft\n");
        Run put = run("put", fa.toString(), fb.toString(), "--url");
        assertThat(put.exit()).as(put.err()).isZero();
        String[] lines = put.out().strip().split("\n");
        assertThat(lines).hasSize(2);
        String idA = lines[0].split(" ")[0];
        assertThat(lines[0]).contains(fa.toString()).contains("http://127.0.0.1:");
        assertThat(idA).matches("\\d+,\\d+,0,[0-9a-f]{16}");

        Path back = dir.resolve("a.back");
        assertThat(run("get", idA, "-o", back.toString()).exit()).isZero();
        assertThat(Files.readAllBytes(back)).isEqualTo(a);

        Run stat = run("stat", idA);
        assertThat(stat.exit()).isZero();
        assertThat(stat.out()).contains("volume").contains("WRITABLE").contains("alts      0 (" + a.length + " bytes)");
        Run summary = run("stat");
        assertThat(summary.out()).contains("stores    3 {UP=3}");
        assertThat(run("volumes").out()).contains("WRITABLE");
        assertThat(run("stores").out()).contains("store-0").contains("UP");

        Run rm = run("rm", idA);
        assertThat(rm.exit()).isZero();
        assertThat(rm.out()).contains("deleted " + idA);
        Run gone = run("get", idA, "-o", dir.resolve("x").toString());
        assertThat(gone.exit()).isEqualTo(Hayloft.EXIT_FAILED);
        assertThat(gone.err()).contains("not found: no such photo");
        assertThat(Files.exists(dir.resolve("x"))).isFalse();
    }

    @Test
    void badInputExitsWithUsageErrors() {
        Run malformed = run("get", "1,2,zz");
        assertThat(malformed.exit()).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(malformed.err()).contains("malformed photo id '1,2,zz'");
        Run missing = run("put", dir.resolve("no-such-file").toString());
        assertThat(missing.exit()).isEqualTo(Hayloft.EXIT_USAGE);
        assertThat(missing.err()).contains("no such file");
        Run unknown = run("get", "1,999999,0,00000000000000ff", "-o", dir.resolve("y").toString());
        assertThat(unknown.exit()).isEqualTo(Hayloft.EXIT_FAILED);
        assertThat(unknown.err()).contains("not found: no such photo");
        StringWriter err = new StringWriter();
        CommandLine cl = Hayloft.commandLine();
        cl.setErr(new PrintWriter(err, true));
        assertThat(cl.execute("stores", "--directory=127.0.0.1:1")).isEqualTo(Hayloft.EXIT_FAILED);
        assertThat(err.toString()).contains("127.0.0.1:1").contains("cannot connect");
    }

    private static Run raw(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = Hayloft.commandLine();
        cl.setOut(new PrintWriter(out, true));
        cl.setErr(new PrintWriter(err, true));
        int exit = cl.execute(args);
        return new Run(exit, out.toString(), err.toString());
    }

    @Test
    void aListOfDirectoryReplicasIsUsedAsAListAndABadEntryIsNamed() throws Exception {
        String list = "--directory=127.0.0.1:1," + cluster.directoryAddress(); // the first refuses connections
        Path f = Files.writeString(dir.resolve("c.txt"), "replicas\n");
        Run put = raw("put", list, f.toString());
        assertThat(put.exit()).as(put.err()).isZero();
        String id = put.out().strip().split(" ")[0];
        Path back = dir.resolve("c.back");
        assertThat(raw("get", list, id, "-o", back.toString()).exit()).isZero();
        assertThat(Files.readString(back)).isEqualTo("replicas\n");
        assertThat(raw("stores", list).out()).contains("store-0");
        Run show = raw("volumes", "show", list, id.split(",")[0]); // an operator verb (the raid-node's Cluster)
        assertThat(show.exit()).as(show.err()).isZero();

        Run bad = raw("stores", "--directory=" + cluster.directoryAddress() + ",dir2");
        assertThat(bad.exit()).isNotZero();
        assertThat(bad.err()).contains("--directory: entry 'dir2'").contains("host:port");
    }
}
