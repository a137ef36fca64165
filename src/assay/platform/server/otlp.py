"""OTLP/HTTP trace ingest (placeholder until written)."""

from fastapi import APIRouter

router = APIRouter()
