"""A two-role OpenPAI job: one parameter server and its workers find each other through the
PAI_* variables and exchange data over TCP.

Each worker connects to the parameter server at the first address of PAI_TASK_ROLE_ps_server_HOST_LIST
and sends its task index and a vector; the server adds the workers' vectors and sends the sum back
to every worker, which checks it. Every task writes what it saw (its PAI_* variables, the sum) to
$PAI_OUTPUT_DIR/<role>-<index>.json when the output directory is a file:// URI. Standard library
only.
"""
import json
import os
import socket
import sys
import time

CONNECT_DEADLINE_SECONDS = 60  # the server may start after its workers


def env(name):
    value = os.environ.get(name)
    if value is None:
        sys.exit(f"ps_workers: {name} is not set; run me as a task of an OpenPAI job")
    return value


def host_list(role):
    listed = env(f"PAI_TASK_ROLE_{role}_HOST_LIST")
    return [entry.rsplit(":", 1) for entry in listed.split(",") if entry]


def worker_vector(index):
    return [float(index + 1) * (k + 1) for k in range(4)]


def send_line(sock, value):
    sock.sendall((json.dumps(value) + "\n").encode())


def read_line(stream):
    line = stream.readline()
    if not line:
        raise ConnectionError("the peer closed the connection")
    return json.loads(line)


def serve(worker_count):
    port = int(env("PAI_CONTAINER_HOST_http_PORT_LIST").split(",")[0])
    with socket.create_server(("0.0.0.0", port)) as server:
        print(f"ps_server: listening on {port} for {worker_count} worker(s)", flush=True)
        peers = []
        for _ in range(worker_count):
            conn, address = server.accept()
            stream = conn.makefile("r")
            hello = read_line(stream)
            print(f"ps_server: worker {hello['index']} from {address[0]}", flush=True)
            peers.append((conn, stream, hello))
        total = [sum(values) for values in zip(*(hello["vector"] for _, _, hello in peers))]
        for conn, stream, _ in peers:
            send_line(conn, {"sum": total})
            stream.close()
            conn.close()
    print(f"ps_server: sent the sum {total}", flush=True)
    return {"sum": total, "workers": sorted(hello["index"] for _, _, hello in peers)}


def work(index):
    host, port = host_list("ps_server")[0]
    deadline = time.monotonic() + CONNECT_DEADLINE_SECONDS
    while True:
        try:
            sock = socket.create_connection((host, int(port)), timeout=5)
            break
        except OSError as error:
            if time.monotonic() > deadline:
                sys.exit(f"worker {index}: the parameter server at {host}:{port} never answered: {error}")
            time.sleep(0.05)  # polling for the server's socket, within the deadline
    with sock:
        sock.settimeout(None)
        vector = worker_vector(index)
        send_line(sock, {"index": index, "vector": vector})
        reply = read_line(sock.makefile("r"))
    workers = len(host_list("worker"))
    expected = [sum(values) for values in zip(*(worker_vector(i) for i in range(workers)))]
    if reply["sum"] != expected:
        sys.exit(f"worker {index}: got the sum {reply['sum']}, expected {expected}")
    print(f"worker {index}: the sum {reply['sum']} is right", flush=True)
    return {"sum": reply["sum"]}


def main():
    role = env("PAI_CURRENT_TASK_ROLE_NAME")
    index = int(env("PAI_CURRENT_TASK_ROLE_CURRENT_TASK_INDEX"))
    if role == "ps_server":
        result = serve(len(host_list("worker")))
    else:
        result = work(index)
    output = os.environ.get("PAI_OUTPUT_DIR", "")
    if output.startswith("file://"):
        directory = output[len("file://"):]
        os.makedirs(directory, exist_ok=True)
        result["env"] = {k: v for k, v in os.environ.items() if k.startswith("PAI_")}
        result["cwd"] = os.getcwd()
        with open(os.path.join(directory, f"{role}-{index}.json"), "w") as out:
            json.dump(result, out, indent=2, sort_keys=True)


if __name__ == "__main__":
    main()
