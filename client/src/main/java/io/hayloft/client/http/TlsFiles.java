package io.hayloft.client.http;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.UnrecoverableKeyException;
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
            tmf.init(load("trustStore", trustStore, trustPassword));
            KeyManagerFactory kmf = null;
            if (keyStore != null) {
                kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
                kmf.init(load("keyStore", keyStore, keyPassword), chars(keyPassword));
            }
            SSLContext ctx = SSLContext.getInstance("TLS");
            ctx.init(kmf == null ? null : kmf.getKeyManagers(), tmf.getTrustManagers(), null);
            return ctx;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot build a TLS context from " + trustStore
                    + (keyStore == null ? "" : " and " + keyStore) + ": " + e.getMessage(), e);
        }
    }

    private static KeyStore load(String what, String file, String password) {
        Path p = Path.of(file);
        if (!Files.isRegularFile(p)) {
            throw new IllegalArgumentException(what + " " + file + ": no such file");
        }
        try (InputStream in = Files.newInputStream(p)) {
            KeyStore ks = KeyStore.getInstance("PKCS12");
            ks.load(in, chars(password));
            return ks;
        } catch (IOException e) {
            // by the cause's type (PKCS12KeyStore wraps a wrong password's UnrecoverableKeyException), not the message
            String why = e.getCause() instanceof UnrecoverableKeyException
                    ? "wrong password" : "not a PKCS#12 keystore (" + e.getMessage() + ")";
            throw new IllegalArgumentException(what + " " + file + ": " + why, e);
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException(what + " " + file + ": cannot be read (" + e.getMessage() + ")", e);
        }
    }

    private static char[] chars(String password) {
        return password == null ? new char[0] : password.toCharArray();
    }
}
