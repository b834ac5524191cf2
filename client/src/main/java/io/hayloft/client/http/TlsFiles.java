package io.hayloft.client.http;

import io.hayloft.format.io.KeyStoreFiles;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/**
 * A client {@link SSLContext} from PKCS#12 files with the JDK alone (the client library carries no
 * Netty; servers build the same context with {@code io.hayloft.serverkit.http.Tls.Settings#clientContext}).
 * Stateless and thread-safe.
 */
final class TlsFiles {

    private TlsFiles() {
    }

    /**
     * Trusts the certificates in {@code trustStore}; presents the key in {@code keyStore} when not null.
     *
     * @throws IllegalArgumentException naming the file and the problem, never the password
     */
    static SSLContext context(String trustStore, String trustPassword, String keyStore, String keyPassword) {
        try {
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(KeyStoreFiles.load("trustStore", trustStore, trustPassword));
            KeyManagerFactory kmf = null;
            if (keyStore != null) {
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(KeyStoreFiles.load("keyStore", keyStore, keyPassword), KeyStoreFiles.chars(keyPassword));
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot build a TLS context from " + trustStore
                    + (keyStore == null ? "" : " and " + keyStore) + ": " + e.getMessage(), e);
        }
    }


}
