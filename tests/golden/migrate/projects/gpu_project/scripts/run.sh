#!/bin/sh
# run on cuda
CUDA_VISIBLE_DEVICES=0 python train_classifier.py "$@"
