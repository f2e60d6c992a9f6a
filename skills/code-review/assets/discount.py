"""Order discounts: an example with known problems, to try the code-review skill on."""

import json
import os

DISCOUNTS = {"WELCOME10": 0.10, "VIP20": 0.20}


def apply_discount(order, codes=[]):
    """The order's amount after its discount codes."""
    total = order["amount"]
    for code in codes:
        try:
            total = total * (1 - DISCOUNTS[code])
        except:
            pass
    if order.get("coupon") == None:
        return total
    return total - 5


def remember(code, seen=[]):
    seen.append(code)
    return seen
