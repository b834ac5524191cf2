#!/usr/bin/env python3
"""boto3 against a Hayloft S3 gateway, with boto3's defaults (checksums on: CRC32 trailers on uploads,
response checksums validated): buckets, put/get/head, listing with pagination, multipart through the
transfer manager, ranged get, copy, delete_objects. Exits 0 and prints "boto3 ok" when every check holds.

Usage: boto3_check.py ENDPOINT BUCKET (credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY).
"""
import hashlib
import io
import os
import sys

import boto3
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    endpoint, bucket = sys.argv[1], sys.argv[2]
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 2}))
    print("boto3", boto3.__version__, "botocore", __import__("botocore").__version__)

    s3.create_bucket(Bucket=bucket)
    check(bucket in [b["Name"] for b in s3.list_buckets()["Buckets"]], "list_buckets names the bucket")
    s3.head_bucket(Bucket=bucket)

    # put / get / head, sizes 0 and 1 and a few MiB, odd keys
    bodies = {"empty": b"", "one": b"\x00", "grüße/ファイル 名+%.bin": os.urandom(3 * 1024 * 1024 + 7)}
    for key, body in bodies.items():
        r = s3.put_object(Bucket=bucket, Key=key, Body=body)
        check(r["ETag"] == '"%s"' % hashlib.md5(body).hexdigest(), "ETag of %r" % key)
        got = s3.get_object(Bucket=bucket, Key=key, ChecksumMode="ENABLED")
        check(got["Body"].read() == body, "bytes of %r" % key)
        check(s3.head_object(Bucket=bucket, Key=key)["ContentLength"] == len(body), "length of %r" % key)

    # each checksum algorithm
    data = os.urandom(100000)
    # (CRC32C and CRC64NVME need botocore[crt]: left to the Java SDK suite.)
    for algorithm in ("CRC32", "SHA1", "SHA256"):
        s3.put_object(Bucket=bucket, Key="sum/" + algorithm, Body=data, ChecksumAlgorithm=algorithm)
        h = s3.head_object(Bucket=bucket, Key="sum/" + algorithm, ChecksumMode="ENABLED")
        check(("Checksum" + algorithm) in h, "%s answered on HEAD: %s" % (algorithm, h))
        check(s3.get_object(Bucket=bucket, Key="sum/" + algorithm, ChecksumMode="ENABLED")["Body"].read() == data,
              "bytes with " + algorithm)

    # ranged get
    big = bodies["grüße/ファイル 名+%.bin"]
    r = s3.get_object(Bucket=bucket, Key="grüße/ファイル 名+%.bin", Range="bytes=1048570-2097160")
    check(r["Body"].read() == big[1048570:2097161], "ranged get")
    check(r["ContentRange"] == "bytes 1048570-2097160/%d" % len(big), "Content-Range")

    # multipart through the transfer manager (5 MiB parts)
    payload = os.urandom(13 * 1024 * 1024 + 11)
    cfg = TransferConfig(multipart_threshold=5 * 1024 * 1024, multipart_chunksize=5 * 1024 * 1024, max_concurrency=4)
    s3.upload_fileobj(io.BytesIO(payload), bucket, "multi/part.bin", Config=cfg)
    h = s3.head_object(Bucket=bucket, Key="multi/part.bin")
    check(h["ETag"].endswith('-3"'), "multipart ETag: %s" % h["ETag"])
    out = io.BytesIO()
    s3.download_fileobj(bucket, "multi/part.bin", out, Config=cfg)
    check(out.getvalue() == payload, "multipart bytes")

    # low-level multipart with abort and list
    up = s3.create_multipart_upload(Bucket=bucket, Key="multi/aborted")
    s3.upload_part(Bucket=bucket, Key="multi/aborted", UploadId=up["UploadId"], PartNumber=1, Body=b"x" * 1000)
    listed = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
    check(any(u["UploadId"] == up["UploadId"] for u in listed), "list_multipart_uploads")
    s3.abort_multipart_upload(Bucket=bucket, Key="multi/aborted", UploadId=up["UploadId"])
    try:
        s3.list_parts(Bucket=bucket, Key="multi/aborted", UploadId=up["UploadId"])
        check(False, "list_parts after abort")
    except ClientError as e:
        check(e.response["Error"]["Code"] == "NoSuchUpload", "NoSuchUpload: %s" % e.response)

    # copy
    s3.copy_object(Bucket=bucket, Key="copied", CopySource={"Bucket": bucket, "Key": "one"})
    check(s3.get_object(Bucket=bucket, Key="copied")["Body"].read() == b"\x00", "copy")

    # listing with pagination and delimiter
    for i in range(25):
        s3.put_object(Bucket=bucket, Key="page/%02d" % i, Body=b"%d" % i)
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="page/", PaginationConfig={"PageSize": 7}):
        keys += [o["Key"] for o in page.get("Contents", [])]
    check(keys == ["page/%02d" % i for i in range(25)], "paginated listing: %s" % keys)
    top = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    prefixes = [p["Prefix"] for p in top.get("CommonPrefixes", [])]
    check(prefixes == sorted(prefixes, key=lambda p: p.encode()) and "page/" in prefixes and "multi/" in prefixes,
          "common prefixes: %s" % prefixes)

    # errors
    try:
        s3.get_object(Bucket=bucket, Key="no such key")
        check(False, "get of a missing key")
    except ClientError as e:
        check(e.response["Error"]["Code"] == "NoSuchKey", "NoSuchKey: %s" % e.response)

    # delete_objects (boto3 sends it with a checksum) then the bucket
    everything = [o["Key"] for p in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket) for o in p.get("Contents", [])]
    for i in range(0, len(everything), 1000):
        r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in everything[i:i + 1000]]})
        check(not r.get("Errors"), "delete_objects errors: %s" % r.get("Errors"))
    check(s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0, "bucket empty")
    s3.delete_bucket(Bucket=bucket)
    print("boto3 ok")


if __name__ == "__main__":
    main()
