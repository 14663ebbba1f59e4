"""The pydantic models of W4's `order` tool, shared by the mcpkit and official servers so both
validate exactly the same nested shape (pydantic is in both venvs). The raw server does not use
them: it reads the arguments as plain dicts, with no validation, to show the floor."""

from pydantic import BaseModel


class Address(BaseModel):
    street: str
    city: str
    zip: str


class Customer(BaseModel):
    name: str
    email: str
    address: Address


class Item(BaseModel):
    sku: str
    quantity: int
    price: float


class Receipt(BaseModel):
    customer: str
    item_count: int
    total: float
