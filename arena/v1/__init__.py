"""Generated protobuf and gRPC code for proto/arena/v1 (never edit by hand)."""
