package io.hayloft.client.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.DirectoryException;
import io.hayloft.client.Futures;
import io.hayloft.client.RawServer;
import io.hayloft.client.RemoteException;
import io.hayloft.cold.ClusterRpc;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A replicated directory's answers as the one HTTP layer follows them, against raw-socket servers
 * that answer what a follower, a leader and a replica without a leader answer (the contract of
 * docs/directory-api.md): 421 {@code NOT_LEADER} naming the leader (in the error body and the
 * {@code X-Hayloft-Leader} header) is followed at once and the leader is preferred afterwards; a
 * replica that keeps naming itself ends the call after a bounded number of hops; 503
 * {@code NO_LEADER} goes on to the next address; a POST that a follower refused reaches the leader
 * exactly once.
 */
class LeaderFollowingTest {
    private static final String OK = "{\"ok\":true}";
    private static HttpTransport transport;

    @BeforeAll
    static void start() {
        transport = HttpTransport.builder().connectTimeout(Duration.ofSeconds(2)).requestTimeout(Duration.ofSeconds(5))
                .retries(2, Duration.ofMillis(1), Duration.ofMillis(5)).build();
    }

    /** A follower's answer: 421 NOT_LEADER naming {@code leader} (null: it knows none) in the body and the header. */
    static byte[] notLeader(String leader) {
        String body = "{\"error\":{\"code\":230,\"name\":\"NOT_LEADER\",\"message\":\"not the leader\",\"leader\":"
                + (leader == null ? "null" : "\"" + leader + "\"") + "}}";
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        String head = "HTTP/1.1 421 Misdirected Request\r\nContent-Type: application/json\r\nContent-Length: " + b.length
                + (leader == null ? "" : "\r\nX-Hayloft-Leader: " + leader) + "\r\nConnection: close\r\n\r\n";
        byte[] h = head.getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[h.length + b.length];
        System.arraycopy(h, 0, all, 0, h.length);
        System.arraycopy(b, 0, all, h.length, b.length);
        return all;
    }

    static byte[] noLeader() {
        return RawServer.response(503, "application/json",
                "{\"error\":{\"code\":231,\"name\":\"NO_LEADER\",\"message\":\"no leader now\"}}");
    }

    static byte[] ok() {
        return RawServer.response(200, "application/json", OK);
    }

    private static Function<String, HttpRequest> get(String path) {
        return a -> transport.request(transport.uri(a, path)).GET().build();
    }

    private static Function<String, HttpRequest> post(String path) {
        return a -> transport.request(transport.uri(a, path)).POST(HttpRequest.BodyPublishers.ofString("{\"keys\":1}")).build();
    }

    private static String call(AddressList list, String what, Function<String, HttpRequest> request) {
        return new String(Futures.await(transport.call(list, what, request, false, Duration.ofSeconds(10), s -> s == 200,
                DirectoryException::new)).body(), StandardCharsets.UTF_8);
    }

    @Test
    void aFollowerNamingTheLeaderSendsTheCallThereAndLaterCallsStartThere() throws IOException {
        try (RawServer leader = new RawServer(r -> ok())) {
            try (RawServer follower = new RawServer(r -> notLeader(leader.address()))) {
                AddressList list = AddressList.of(List.of(follower.address(), leader.address()));
                assertThat(call(list, "GET /v1/volume-map", get("/v1/volume-map"))).isEqualTo(OK);
                assertThat(follower.requests()).hasSize(1);
                assertThat(leader.requests()).hasSize(1);
                assertThat(list.get(list.preferred())).isEqualTo(leader.address());

                assertThat(call(list, "GET /v1/volumes", get("/v1/volumes"))).isEqualTo(OK);
                assertThat(follower.requests()).as("a later call starts at the leader").hasSize(1);
                assertThat(leader.requests()).hasSize(2);
            }
        }
    }

    @Test
    void aLeaderTheListDoesNotNameIsLearnedFromTheHeaderAlone() throws IOException {
        try (RawServer leader = new RawServer(r -> ok())) {
            // the header names the leader; the body's leader field is absent
            String body = "{\"error\":{\"code\":230,\"name\":\"NOT_LEADER\",\"message\":\"not the leader\"}}";
            byte[] headerOnly = ("HTTP/1.1 421 Misdirected Request\r\nContent-Type: application/json\r\nX-Hayloft-Leader: "
                    + leader.address() + "\r\nContent-Length: " + body.length() + "\r\nConnection: close\r\n\r\n" + body)
                    .getBytes(StandardCharsets.US_ASCII);
            try (RawServer follower = new RawServer(r -> headerOnly)) {
                AddressList list = AddressList.of(follower.address());
                assertThat(call(list, "GET /v1/x", get("/v1/x"))).isEqualTo(OK);
                assertThat(list.all()).containsExactly(follower.address(), leader.address());
                assertThat(list.addresses()).containsExactly(follower.address());
                assertThat(list.preferred()).isEqualTo(1);
            }
        }
    }

    @Test
    void aReplicaThatNamesItselfForeverEndsTheCallAfterBoundedHops() throws IOException {
        RawServer[] self = new RawServer[1];
        try (RawServer confused = new RawServer(r -> notLeader(self[0].address()))) {
            self[0] = confused;
            AddressList list = AddressList.of(confused.address());
            Throwable t = catchThrowable(() -> call(list, "POST /v1/leases", post("/v1/leases")));
            assertThat(t).isInstanceOf(DirectoryException.class);
            RemoteException e = (RemoteException) t;
            assertThat(e.httpStatus()).isEqualTo(421);
            assertThat(e.errorName()).isEqualTo("NOT_LEADER");
            assertThat(e.leader()).isEqualTo(confused.address());
            assertThat(e.getMessage()).contains(confused.address()).contains("NOT_LEADER").contains("leader: " + confused.address());
            // the first attempt, the hops, then the leader waits: never more
            assertThat(confused.requests().size()).isBetween(1 + RetryPolicy.MAX_LEADER_HOPS,
                    1 + 2 * RetryPolicy.MAX_LEADER_HOPS + RetryPolicy.LEADER_ROUNDS);
        }
    }

    @Test
    void twoReplicasNamingEachOtherEndTheCallAfterBoundedHops() throws IOException {
        RawServer[] other = new RawServer[2];
        try (RawServer a = new RawServer(r -> notLeader(other[1].address()));
             RawServer b = new RawServer(r -> notLeader(other[0].address()))) {
            other[0] = a;
            other[1] = b;
            AddressList list = AddressList.of(List.of(a.address(), b.address()));
            Throwable t = catchThrowable(() -> call(list, "GET /v1/x", get("/v1/x")));
            assertThat(((RemoteException) t).code()).isEqualTo(230);
            int total = a.requests().size() + b.requests().size();
            assertThat(total).isBetween(1 + RetryPolicy.MAX_LEADER_HOPS,
                    2 + 2 * RetryPolicy.MAX_LEADER_HOPS + 2 * RetryPolicy.LEADER_ROUNDS);
        }
    }

    @Test
    void noLeaderGoesOnToTheNextAddressEvenForAPost() throws IOException {
        try (RawServer cutOff = new RawServer(r -> noLeader());
             RawServer good = new RawServer(r -> ok())) {
            AddressList list = AddressList.of(List.of(cutOff.address(), good.address()));
            assertThat(call(list, "POST /v1/leases", post("/v1/leases"))).isEqualTo(OK);
            assertThat(cutOff.requests()).hasSize(1);
            assertThat(good.requests()).hasSize(1);
            assertThat(list.preferred()).isEqualTo(1);
        }
    }

    @Test
    void aFollowerWithoutALeaderIsLikeNoLeader() throws IOException {
        try (RawServer lost = new RawServer(r -> notLeader(null));
             RawServer good = new RawServer(r -> ok())) {
            AddressList list = AddressList.of(List.of(lost.address(), good.address()));
            assertThat(call(list, "POST /v1/heartbeat", post("/v1/heartbeat"))).isEqualTo(OK);
            assertThat(lost.requests()).hasSize(1);
            assertThat(good.requests()).hasSize(1);
        }
    }

    @Test
    void aPostRefusedByAFollowerIsSentExactlyOnceToTheLeader() throws IOException {
        try (RawServer leader = new RawServer(r -> ok())) {
            try (RawServer follower = new RawServer(r -> notLeader(leader.address()))) {
                AddressList list = AddressList.of(List.of(follower.address(), leader.address()));
                assertThat(call(list, "POST /v1/leases", post("/v1/leases"))).isEqualTo(OK);
                assertThat(follower.requests()).hasSize(1);
                assertThat(leader.requests()).hasSize(1);
                assertThat(leader.requests().get(0).line()).startsWith("POST /v1/leases ");
                assertThat(new String(leader.requests().get(0).body(), StandardCharsets.UTF_8)).isEqualTo("{\"keys\":1}");
            }
        }
    }

    @Test
    void anElectionIsRiddenOutWhileEveryReplicaKnowsNoLeader() throws IOException {
        // every replica answers NO_LEADER to its first two requests, then one of them is the leader
        try (RawServer a = new RawServer(r -> noLeader());
             RawServer b = new RawServer(r -> null)) {
            b.close(); // b is down: refused
            int[] asked = new int[1];
            try (RawServer c = new RawServer(r -> ++asked[0] <= 2 ? noLeader() : ok())) {
                AddressList list = AddressList.of(List.of(a.address(), b.address(), c.address()));
                assertThat(call(list, "POST /v1/leases", post("/v1/leases"))).isEqualTo(OK);
                assertThat(c.requests()).hasSize(3);
                assertThat(list.get(list.preferred())).isEqualTo(c.address());
            }
        }
    }

    @Test
    void clusterRpcCallsThatTakeEveryStatusFollowTheLeaderToo() throws IOException {
        try (RawServer leader = new RawServer(r -> ok())) {
            try (RawServer follower = new RawServer(r -> notLeader(leader.address()))) {
                ClusterRpc rpc = transport.clusterRpc();
                ClusterRpc.Servers servers = rpc.servers(List.of(follower.address(), leader.address()));
                HttpResponse<byte[]> r = Futures.await(rpc.send(servers, "POST /v1/volumes/1/encoding/commit",
                        post("/v1/volumes/1/encoding/commit"), false, Duration.ofSeconds(10)));
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(leader.requests()).hasSize(1);
            }
        }
    }
}
