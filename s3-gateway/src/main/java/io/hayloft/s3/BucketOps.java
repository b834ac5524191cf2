package io.hayloft.s3;

import io.hayloft.format.s3.Bucket;
import io.hayloft.s3.Answers.Call;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpResponseStatus;
import java.util.List;

/**
 * ListBuckets, CreateBucket, HeadBucket, DeleteBucket, GetBucketLocation, and the minimal answers of
 * GetBucketVersioning (never enabled) and GET ?acl (the owner has FULL_CONTROL). Stateless; thread-safe.
 */
final class BucketOps {
    private BucketOps() {
    }

    static FullHttpResponse listBuckets(Call c) {
        List<Bucket> buckets = Gateway.await(c.g().namespace().buckets());
        Xml.Writer w = new Xml.Writer("ListAllMyBucketsResult");
        owner(w, c.g());
        w.start("Buckets");
        for (Bucket b : buckets) {
            w.start("Bucket").text("Name", b.name()).text("CreationDate", Xml.time(b.created()))
                    .text("BucketRegion", b.region() == null ? c.g().config().region : b.region()).end();
        }
        w.end();
        return Answers.xml(w);
    }

    /** {@code <Owner><ID/><DisplayName/></Owner>}. */
    static void owner(Xml.Writer w, Gateway g) {
        w.start("Owner").text("ID", g.owner()).text("DisplayName", "hayloft").end();
    }

    /** CreateBucket, with an optional CreateBucketConfiguration naming this gateway's region (another: InvalidArgument). */
    static FullHttpResponse create(Call c) {
        String region = c.g().config().region;
        if (c.body().length > 0) {
            Xml.Element conf = Xml.parse(c.body(), "CreateBucketConfiguration");
            String constraint = conf.childText("LocationConstraint");
            if (constraint != null && !constraint.isBlank() && !constraint.trim().equals(region)) {
                throw new S3Exception(S3Error.INVALID_ARGUMENT, "The specified location-constraint " + constraint.trim()
                        + " is not valid: this gateway serves region " + region);
            }
        }
        Gateway.await(c.g().namespace().createBucket(c.req().bucket(), region));
        FullHttpResponse r = Answers.empty(HttpResponseStatus.OK);
        r.headers().set(HttpHeaderNames.LOCATION, "/" + c.req().bucket());
        return r;
    }

    static FullHttpResponse head(Call c) {
        Bucket b = Gateway.await(c.g().namespace().bucket(c.req().bucket()));
        FullHttpResponse r = Answers.empty(HttpResponseStatus.OK);
        r.headers().set("x-amz-bucket-region", b.region() == null ? c.g().config().region : b.region());
        return r;
    }

    static FullHttpResponse delete(Call c) {
        Gateway.await(c.g().namespace().deleteBucket(c.req().bucket()));
        return Answers.empty(HttpResponseStatus.NO_CONTENT);
    }

    /** GetBucketLocation: S3 answers an empty constraint for us-east-1. */
    static FullHttpResponse location(Call c) {
        Bucket b = Gateway.await(c.g().namespace().bucket(c.req().bucket()));
        String region = b.region() == null ? c.g().config().region : b.region();
        return Answers.xml(HttpResponseStatus.OK, locationBody(region.equals("us-east-1") ? "" : region));
    }

    /** {@code <LocationConstraint xmlns="...">region</LocationConstraint>}. */
    static byte[] locationBody(String region) {
        String xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<LocationConstraint xmlns=\"" + Xml.NAMESPACE + "\">"
                + region + "</LocationConstraint>";
        return xml.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }

    /** GetBucketVersioning: versioning is never enabled here (an empty configuration, as S3 for a bucket never versioned). */
    static FullHttpResponse versioning(Call c) {
        Gateway.await(c.g().namespace().bucket(c.req().bucket()));
        return Answers.xml(new Xml.Writer("VersioningConfiguration"));
    }

    /** GET ?acl of a bucket or object: the owner has FULL_CONTROL (there are no other grants). */
    static FullHttpResponse acl(Call c) {
        if (c.req().key() != null) {
            Gateway.await(c.g().namespace().object(c.req().bucket(), c.req().key()));
        } else {
            Gateway.await(c.g().namespace().bucket(c.req().bucket()));
        }
        Xml.Writer w = new Xml.Writer("AccessControlPolicy");
        owner(w, c.g());
        w.start("AccessControlList").start("Grant").start("Grantee").text("ID", c.g().owner()).text("DisplayName", "hayloft")
                .end().text("Permission", "FULL_CONTROL").end().end();
        return Answers.xml(w);
    }
}
