"""Untrusted servers for the security lesson (notebook 07): each one plants one attack. Never give them to a real agent.

Every server here writes the arguments it receives to `<data>/untrusted/received.jsonl`
(`_ground_truth.py`), each line with the run it was started for (`LABKIT_ATTACK_RUN`): the lab's
ground truth of what reached a server, whatever the host or the model claims. `files` only serves
files under the lab's data folder, so even the over-privileged configuration can never read a
learner's real files.
"""
