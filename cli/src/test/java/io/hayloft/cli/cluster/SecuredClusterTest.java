package io.hayloft.cli.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.hayloft.client.DirectoryException;
import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.client.RemoteException;
import io.hayloft.client.store.StoreException;
import io.hayloft.format.wire.PhotoId;
import io.hayloft.format.wire.Wire;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A cluster with a secret: the client's writes carry the directory's tokens; writes without one are refused. */
class SecuredClusterTest {
    @TempDir
    Path dir;

    @Test
    void writesNeedTheDirectorysToken() throws Exception {
        try (EmbeddedCluster cluster = EmbeddedCluster.start(ClusterOptions.of(dir).withFsync(false)
                .withTiming(100, 60_000, 3).withSecrets("a-cluster-secret-of-some-length", "admin-secret"));
             HayloftClient client = cluster.newClient()) {
            PutResult one = client.put(new byte[] {1, 2, 3});
            List<PutResult> many = client.putAll(List.of(new byte[100], new byte[200], new byte[300]));
            assertThat(client.get(one.id())).containsExactly(1, 2, 3);
            assertThat(client.get(many.get(2).id())).hasSize(300);

            String store = client.stat(one.id()).replicas().get(0);
            PhotoId forged = new PhotoId(one.id().volume(), one.id().key() + 1000, 0, 7);
            RemoteException noToken = (RemoteException) catchThrowable(() ->
                    Futures.await(client.stores().write(store, forged, new byte[10], null)));
            assertThat(noToken.httpStatus()).isEqualTo(403);
            assertThat(noToken.code()).isEqualTo(StoreException.FORBIDDEN);
            // A lease's token covers its own keys only: the next key is refused.
            Wire.Lease other = Futures.await(client.directory().lease(1, List.of()));
            PhotoId outside = new PhotoId(other.volume(), other.first() + 1, 0, 7);
            RemoteException wrongKey = (RemoteException) catchThrowable(() ->
                    Futures.await(client.stores().write(other.replicas().get(0), outside, new byte[10], other.token())));
            assertThat(wrongKey.httpStatus()).isEqualTo(403);
            assertThat(wrongKey.serverMessage()).contains("key " + outside.key()).contains("refused");

            // An application's client has no admin token (the cluster's own client does).
            try (HayloftClient app = HayloftClient.builder().directory(cluster.directoryAddress()).build()) {
                RemoteException admin = (RemoteException) catchThrowable(() -> Futures.await(app.directory().createVolumes(1)));
                assertThat(admin).isInstanceOf(DirectoryException.class);
                assertThat(admin.code()).isEqualTo(DirectoryException.UNAUTHORIZED);
            }
            assertThat(Futures.await(client.directory().createVolumes(1))).hasSize(1);
        }
    }
}
