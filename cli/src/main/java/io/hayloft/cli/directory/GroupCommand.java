package io.hayloft.cli.directory;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.hayloft.cli.Hayloft;
import io.hayloft.cli.client.ClientOptions;
import io.hayloft.client.DirectoryClient;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.RemoteException;
import io.hayloft.client.http.HttpTransport;
import io.hayloft.format.directory.GroupInfo;
import java.io.PrintWriter;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft directory group}: shows a directory group ({@code GET /v1/group}, any replica
 * answers: the addresses of {@code -d} are asked in order until one does) and changes it
 * ({@code add}, {@code remove}, {@code transfer-leader}: admin calls that the leader answers, found
 * through a follower's 421 by the client's HTTP layer). Exit codes: 0 with a leader (or a change
 * made), 1 when the group has no leader or the change failed, 2 for bad usage or a request the
 * directory refused as bad. docs/operations.md "A replicated directory".
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "group", mixinStandardHelpOptions = true,
        subcommands = {GroupCommand.Add.class, GroupCommand.Remove.class, GroupCommand.TransferLeader.class},
        description = {"Show the directory group: each replica's id, HTTP address, role and applied Raft index, and which leads",
                "(any replica answers). Exit 0 when the group has a leader, 1 when it has none.",
                "With a verb, change the group (on its leader; needs the admin token)."},
        footer = {"", "Examples:", "  hayloft directory group -d 10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000",
                "  hayloft directory group -d 10.0.0.1:7000 --json | jq .leader",
                "  hayloft directory group add n4 --raft 10.0.0.4:7100 --http 10.0.0.4:7000 -d 10.0.0.1:7000,10.0.0.2:7000",
                "  hayloft directory group remove n3 -d 10.0.0.1:7000,10.0.0.2:7000",
                "  hayloft directory group transfer-leader n2 -d 10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000"})
public final class GroupCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Option(names = "--json", description = "print the group as JSON (the answer of GET /v1/group), nothing else on stdout")
    boolean json;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        GroupInfo g = run(spec, client, DirectoryClient::group);
        if (g == null) {
            return Hayloft.EXIT_USAGE;
        }
        if (json) {
            try {
                out.println(HttpTransport.JSON.writerWithDefaultPrettyPrinter().writeValueAsString(g));
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("cannot write the group as JSON: " + e.getMessage(), e);
            }
        } else {
            print(g, out);
        }
        out.flush();
        if (g.leader() == null) {
            if (!json) {
                spec.commandLine().getErr().println("hayloft: the group has no leader (as replica " + g.self()
                        + " sees it): no change, lease or linearizable read until a majority of replicas run and reach each other");
            }
            return Hayloft.EXIT_FAILED;
        }
        return 0;
    }

    /** The group as a table: id, HTTP address, role, applied index, and a mark on the leader. */
    static void print(GroupInfo g, PrintWriter out) {
        int idW = "ID".length();
        int httpW = "HTTP".length();
        for (GroupInfo.Replica r : g.replicas()) {
            idW = Math.max(idW, String.valueOf(r.id()).length());
            httpW = Math.max(httpW, String.valueOf(r.http()).length());
        }
        String row = "%-" + idW + "s  %-" + httpW + "s  %-11s  %12s  %s%n";
        out.printf(row, "ID", "HTTP", "ROLE", "APPLIED", "");
        for (GroupInfo.Replica r : g.replicas()) {
            out.printf(row, r.id(), r.http() == null ? "-" : r.http(), r.role(),
                    r.appliedIndex() == null ? "-" : r.appliedIndex().toString(),
                    r.id() != null && r.id().equals(g.leader()) ? "<- leader" : "");
        }
        out.println("leader: " + (g.leader() == null ? "none" : g.leader()) + ", term " + g.term() + " (as replica "
                + g.self() + " sees it)");
    }

    /**
     * Runs one directory call with {@code options}; a request the directory refused as bad (4xx) is
     * a message on stderr and null (exit 2); other failures propagate (exit 1).
     */
    static <T> T run(CommandSpec spec, ClientOptions options, Function<DirectoryClient, CompletableFuture<T>> call) {
        try (HayloftClient c = options.client()) {
            return Futures.await(call.apply(c.directory()));
        } catch (RemoteException e) {
            if (e.kind() == RemoteException.Kind.ERROR && e.httpStatus() >= 400 && e.httpStatus() < 500 && e.httpStatus() != 421) {
                spec.commandLine().getErr().println("hayloft: refused: " + (e.errorName() == null ? "" : e.errorName() + ": ")
                        + (e.serverMessage() == null ? e.getMessage() : e.serverMessage()));
                return null;
            }
            throw e;
        }
    }

    /** The client options given after the verb, else those given before it (to {@code group}). */
    static ClientOptions options(CommandSpec verb, ClientOptions after, GroupCommand parent) {
        var parsed = verb.commandLine().getParseResult();
        for (String o : new String[] {"--directory", "--timeout", "--admin-token", "--tls-trust-store", "--tls-key-store"}) {
            if (parsed.hasMatchedOption(o)) {
                return after;
            }
        }
        var before = parent.spec.commandLine().getParseResult();
        for (String o : new String[] {"--directory", "--timeout", "--admin-token", "--tls-trust-store", "--tls-key-store"}) {
            if (before != null && before.hasMatchedOption(o)) {
                return parent.client;
            }
        }
        return after;
    }

    /** Base of the verbs: run the change, print the group after it. */
    abstract static class Verb implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Mixin
        ClientOptions client;

        @ParentCommand
        GroupCommand parent;

        abstract CompletableFuture<GroupInfo> change(DirectoryClient d);

        abstract String done();

        @Override
        public Integer call() {
            GroupInfo g = run(spec, options(spec, client, parent), this::change);
            if (g == null) {
                return Hayloft.EXIT_USAGE;
            }
            PrintWriter out = spec.commandLine().getOut();
            out.println(done());
            print(g, out);
            out.flush();
            return 0;
        }
    }

    /** {@code group add ID --raft H:P --http H:P}. */
    @Command(name = "add", mixinStandardHelpOptions = true,
            description = {"Add a replica to the group (POST /v1/group/peers, on the leader). Start the new replica first,",
                    "with a raft section whose peers list the group's replicas and itself, and an empty dataDir: it catches up",
                    "from the leader once it is added. Then add it to every replica's configuration file."})
    static final class Add extends Verb {
        @Parameters(index = "0", paramLabel = "ID", description = "the new replica's id (its raft.id)")
        String id;

        @Option(names = "--raft", required = true, paramLabel = "HOST:PORT", description = "the new replica's Raft address")
        String raft;

        @Option(names = "--http", required = true, paramLabel = "HOST:PORT", description = "the new replica's HTTP address")
        String http;

        @Override
        CompletableFuture<GroupInfo> change(DirectoryClient d) {
            checkHostPort("--raft", raft);
            checkHostPort("--http", http);
            return d.addReplica(id, raft, http);
        }

        @Override
        String done() {
            return "added replica " + id + " (raft " + raft + ", http " + http + ")";
        }
    }

    /** {@code group remove ID}. */
    @Command(name = "remove", mixinStandardHelpOptions = true,
            description = {"Remove a replica from the group (DELETE /v1/group/peers/ID, on the leader): e.g. a dead machine,",
                    "before a replacement is added. Then remove it from every replica's configuration file."})
    static final class Remove extends Verb {
        @Parameters(index = "0", paramLabel = "ID", description = "the replica's id")
        String id;

        @Override
        CompletableFuture<GroupInfo> change(DirectoryClient d) {
            return d.removeReplica(id);
        }

        @Override
        String done() {
            return "removed replica " + id;
        }
    }

    /** {@code group transfer-leader ID}. */
    @Command(name = "transfer-leader", mixinStandardHelpOptions = true,
            description = {"Hand the leadership to replica ID (POST /v1/group/leader, on the leader): before stopping the",
                    "leader for an upgrade, so the group never waits for an election."})
    static final class TransferLeader extends Verb {
        @Parameters(index = "0", paramLabel = "ID", description = "the replica to lead")
        String id;

        @Override
        CompletableFuture<GroupInfo> change(DirectoryClient d) {
            return d.transferLeader(id);
        }

        @Override
        String done() {
            return "leadership handed to " + id;
        }
    }

    private static void checkHostPort(String option, String s) {
        int colon = s.lastIndexOf(':');
        boolean ok = colon > 0 && colon < s.length() - 1 && s.substring(colon + 1).chars().allMatch(Character::isDigit)
                && s.length() - colon - 1 <= 5 && Integer.parseInt(s.substring(colon + 1)) >= 1
                && Integer.parseInt(s.substring(colon + 1)) <= 65535;
        if (!ok) {
            throw new IllegalArgumentException(option + " must be host:port, was '" + s + "'");
        }
    }
}
