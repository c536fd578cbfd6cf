"""Create a bucket on an S3 server and upload files into it (tests of remote
archives).

    s3_upload.py ENDPOINT BUCKET PREFIX FILE...

Each FILE is stored as PREFIX/<its name>; the bucket is created if missing.
"""
import os
import sys

import boto3


def main():
    endpoint, bucket, prefix, *files = sys.argv[1:]
    s3 = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="barecat-test-key",
        aws_secret_access_key="barecat-test-secret",
        region_name="us-east-1",
    )
    try:
        s3.create_bucket(Bucket=bucket)
    except s3.exceptions.BucketAlreadyOwnedByYou:
        pass
    for f in files:
        key = "/".join(p for p in (prefix.strip("/"), os.path.basename(f)) if p)
        s3.upload_file(f, bucket, key)


if __name__ == "__main__":
    main()
